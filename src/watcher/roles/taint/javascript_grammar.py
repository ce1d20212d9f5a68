"""The tree-sitter JavaScript, TypeScript and TSX grammars, as the taint engine's roles (``Grammar``).

The three grammars name their nodes alike; TypeScript adds type annotations (ignored: they carry
no values), ``x as T``, ``x satisfies T``, ``<T>x`` and ``x!`` (wrappers: the value of ``x``),
and parameters that wrap their pattern (``required_parameter``). Optional chaining (``a?.b``,
``f?.(x)``) parses as the plain member read or call with an ``optional_chain`` token, so the
engine reads it as one. Function expressions and arrow functions are closures: the engine runs
them where they appear, so a route callback sees the names around it.
"""

from __future__ import annotations

from watcher.roles.taint.spec import Grammar

__all__ = ["JAVASCRIPT_GRAMMAR"]


def _kinds(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STATEMENTS = _kinds(
    "expression_statement return_statement throw_statement if_statement for_statement for_in_statement "
    "while_statement do_statement try_statement switch_statement lexical_declaration variable_declaration "
    "break_statement continue_statement empty_statement labeled_statement"
)
_TYPES = _kinds(
    "type_annotation type_identifier predefined_type generic_type type_arguments type_parameters union_type "
    "intersection_type object_type array_type tuple_type function_type literal_type nested_type_identifier "
    "type_alias_declaration interface_declaration ambient_declaration type_query index_type_query "
    "conditional_type parenthesized_type optional_type readonly_type lookup_type type_predicate_annotation"
)

JAVASCRIPT_GRAMMAR = Grammar(
    blocks=_kinds("program statement_block class_body switch_body"),
    functions=_kinds("function_declaration generator_function_declaration method_definition"),
    classes=_kinds("class_declaration abstract_class_declaration class"),
    decorated=frozenset(),
    assignments=_kinds("assignment_expression"),
    augmented=_kinds("augmented_assignment_expression"),
    declarators=_kinds("variable_declarator"),
    ifs=_kinds("if_statement"),
    else_ifs=frozenset(),
    elses=_kinds("else_clause"),
    for_each=_kinds("for_in_statement"),
    whiles=_kinds("while_statement for_statement"),
    tries=_kinds("try_statement"),
    handlers=_kinds("catch_clause"),
    returns=_kinds("return_statement"),
    exits=_kinds("throw_statement"),
    calls=_kinds("call_expression new_expression"),
    attributes=_kinds("member_expression"),
    subscripts=_kinds("subscript_expression"),
    identifiers=_kinds("identifier this"),
    strings=_kinds("string template_string"),
    string_parts=_kinds("string_fragment escape_sequence"),
    interpolations=_kinds("template_substitution"),
    numbers=_kinds("number"),
    constants={"true": True, "false": False, "null": None, "undefined": None},
    binaries=_kinds("binary_expression"),
    booleans=frozenset(),
    comparisons=frozenset(),
    nots=_kinds("unary_expression"),
    ternaries=_kinds("ternary_expression"),
    sequences=_kinds("array array_pattern"),
    dicts=_kinds("object"),
    pairs=_kinds("pair"),
    comprehensions=frozenset(),
    lambdas=frozenset(),
    keyword_arguments=frozenset(),
    ignored=_kinds(
        "comment import_statement break_statement continue_statement empty_statement debugger_statement "
        "hash_bang_line enum_declaration decorator accessibility_modifier"
    )
    | _TYPES,
    parenthesized=_kinds("parenthesized_expression"),
    finals=_kinds("finally_clause"),
    matches=_kinds("switch_statement"),
    cases=_kinds("switch_case switch_default"),
    defaults=_kinds("switch_default"),
    spreads=_kinds("spread_element rest_pattern"),
    key_names=_kinds("property_identifier private_property_identifier"),
    statements=_STATEMENTS,
    closures=_kinds("arrow_function function_expression generator_function"),
    wrappers=_kinds(
        "await_expression as_expression satisfies_expression non_null_expression type_assertion yield_expression"
    ),
    shorthands=_kinds("shorthand_property_identifier"),
    object_patterns=_kinds("object_pattern"),
    pair_patterns=_kinds("pair_pattern"),
    shorthand_patterns=_kinds("shorthand_property_identifier_pattern"),
    default_patterns=_kinds("assignment_pattern object_assignment_pattern"),
    markup_attributes=_kinds("jsx_attribute"),
    self_name="this",
    mutable_declarations=_kinds("let var"),
    fields={
        ("member_expression", "attribute"): "property",
        ("new_expression", "function"): "constructor",
    },
)
