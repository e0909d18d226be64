"""The structure analysis parses isl text once per text: sets and maps through one
spelling (an lru_cache around isl's constructor), one cache per kind."""

import islpy as isl

from tensorlang.analysis import structure as S


def test_sets_and_maps_share_one_spelling_of_the_parse_cache():
    for cached, kind in ((S._isl_set, isl.Set), (S._isl_map, isl.Map)):
        assert cached.__wrapped__ is kind  # the constructor itself, not a function around it
        assert cached.cache_info().maxsize == 4096


def test_a_text_is_parsed_once_and_gives_what_isl_gives():
    for cached, kind, text in ((S._isl_set, isl.Set, "{ [i0, i1] : 0 <= i0 < 3 and 0 <= i1 <= i0 }"),
                               (S._isl_map, isl.Map, "{ [i0, i1] -> [i1, i0] : 0 <= i0 < 3 and 0 <= i1 < 3 }")):
        first = cached(text)
        assert cached(text) is first and first.is_equal(kind(text))
