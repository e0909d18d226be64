"""The structure analysis parses isl text once per text: sets and maps through one
spelling (an lru_cache around isl's constructor, called through a lambda so that islpy
is imported when the analysis first runs), one cache per kind."""

import islpy as isl

from tensorlang.analysis import structure as S


def test_sets_and_maps_share_one_spelling_of_the_parse_cache():
    for cached, kind, text in ((S._isl_set, isl.Set, "{ [i] : 0 <= i < 2 }"), (S._isl_map, isl.Map, "{ [i] -> [i] }")):
        assert type(cached.__wrapped__(text)) is kind  # the constructor, called on a cache miss
        assert cached.cache_info().maxsize == 4096


def test_a_text_is_parsed_once_and_gives_what_isl_gives():
    for cached, kind, text in ((S._isl_set, isl.Set, "{ [i0, i1] : 0 <= i0 < 3 and 0 <= i1 <= i0 }"),
                               (S._isl_map, isl.Map, "{ [i0, i1] -> [i1, i0] : 0 <= i0 < 3 and 0 <= i1 < 3 }")):
        first = cached(text)
        assert cached(text) is first and first.is_equal(kind(text))
