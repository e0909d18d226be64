"""loops/ir.replace_nodes: what a replacement's own parts become with and without ``inside``."""

from dataclasses import replace

from tensorlang.loops.ir import BinOp, Load, Loop, Select, Store, loads, replace_nodes


def _rename(mapping):
    return lambda n: replace(n, slot=mapping[n.slot]) if isinstance(n, (Load, Store)) and n.slot in mapping else None


def test_inside_renames_loads_nested_in_a_replaced_load():
    # an indirect read, v0[v0[i]]: the inner load sits in the outer one's indices
    nested = Load(0, (Load(0, ("i",)), "j"))
    assert replace_nodes(nested, _rename({0: 5}), inside=True) == Load(5, (Load(5, ("i",)), "j"))
    # without ``inside`` the replacement is taken as it is: the inner load keeps its slot
    assert replace_nodes(nested, _rename({0: 5})) == Load(5, (Load(0, ("i",)), "j"))


def test_inside_reaches_the_value_of_a_replaced_store():
    # the fused loop's slot renaming (fusion._rename_slots): the store is replaced and the
    # loads of its value, a select's cases included, renamed too; other slots stay
    value = BinOp("+", Load(0, ("i",)), Select("i", (Load(1, ("i",)), Load(0, (0,)))))
    loop = Loop("i", 4, (Store(0, ("i",), value),))
    renamed = replace_nodes(loop, _rename({0: 7}), inside=True)
    store = renamed.body[0]
    assert store.slot == 7
    assert [ld.slot for ld in loads((store,))] == [7, 1, 7]
    outer_only = replace_nodes(loop, _rename({0: 7})).body[0]
    assert outer_only.slot == 7 and [ld.slot for ld in loads((outer_only,))] == [0, 1, 0]
