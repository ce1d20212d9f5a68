"""The tree-sitter Python grammar, as the taint engine's roles (``Grammar``).

tree-sitter-python (through ast-grep) reads Python 3.12 f-strings with nested quotes
(PEP 701), ``type`` statements and type parameters (PEP 695), ``except*`` and ``match``,
whatever interpreter runs the watcher.
"""

from __future__ import annotations

from watcher.roles.taint.spec import Grammar

__all__ = ["PYTHON_GRAMMAR"]


def _kinds(text: str) -> frozenset[str]:
    return frozenset(text.split())


PYTHON_GRAMMAR = Grammar(
    blocks=_kinds("module block"),
    functions=_kinds("function_definition"),
    classes=_kinds("class_definition"),
    decorated=_kinds("decorated_definition"),
    assignments=_kinds("assignment named_expression"),
    augmented=_kinds("augmented_assignment"),
    declarators=frozenset(),
    ifs=_kinds("if_statement"),
    else_ifs=_kinds("elif_clause"),
    elses=_kinds("else_clause"),
    for_each=_kinds("for_statement"),
    whiles=_kinds("while_statement"),
    tries=_kinds("try_statement"),
    handlers=_kinds("except_clause except_group_clause"),
    returns=_kinds("return_statement"),
    exits=_kinds("raise_statement"),
    calls=_kinds("call"),
    attributes=_kinds("attribute"),
    subscripts=_kinds("subscript"),
    identifiers=_kinds("identifier"),
    strings=_kinds("string concatenated_string"),
    string_parts=_kinds("string_content"),
    interpolations=_kinds("interpolation"),
    numbers=_kinds("integer float"),
    constants={"true": True, "false": False, "none": None, "ellipsis": ...},
    binaries=_kinds("binary_operator"),
    booleans=_kinds("boolean_operator"),
    comparisons=_kinds("comparison_operator"),
    nots=_kinds("not_operator unary_operator"),
    ternaries=_kinds("conditional_expression"),
    sequences=_kinds("list tuple set expression_list pattern_list tuple_pattern list_pattern"),
    dicts=_kinds("dictionary"),
    pairs=_kinds("pair"),
    comprehensions=_kinds("list_comprehension set_comprehension dictionary_comprehension generator_expression"),
    lambdas=_kinds("lambda"),
    keyword_arguments=_kinds("keyword_argument"),
    ignored=_kinds(
        "comment import_statement import_from_statement future_import_statement global_statement "
        "nonlocal_statement pass_statement type_alias_statement type print_statement exec_statement "
        "delete_statement assert_statement break_statement continue_statement line_continuation"
    ),
    parenthesized=_kinds("parenthesized_expression"),
    finals=_kinds("finally_clause"),
    matches=_kinds("match_statement"),
    cases=_kinds("case_clause"),
    case_patterns=_kinds("case_pattern"),
    union_patterns=_kinds("union_pattern"),
    captures=_kinds("dotted_name"),
    as_patterns=_kinds("as_pattern"),
    spreads=_kinds("list_splat dictionary_splat list_splat_pattern dictionary_splat_pattern"),
    comprehension_clauses=_kinds("for_in_clause"),
    slices=_kinds("slice"),
    fields={
        ("subscript", "object"): "value",
        ("subscript", "index"): "subscript",
        ("named_expression", "left"): "name",
        ("named_expression", "right"): "value",
        ("match_statement", "subject"): "subject",
    },
)
