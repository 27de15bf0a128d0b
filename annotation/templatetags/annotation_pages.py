from django import template

from annotation.rendering import input_context

register = template.Library()


@register.inclusion_tag("annotation/inputs/input.html")
def show_input(kind: str, data: dict) -> dict:
    """`{% show_input item.input_kind item.input_data %}`: the input laid out for reading."""
    return input_context(kind, data)
