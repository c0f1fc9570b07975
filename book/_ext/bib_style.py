"""Sphinx extension: a bibliography labelled the way the text cites it.

The chapters cite author-year ("Hastie et al., 2004"), but pybtex's default ``alpha`` style
labels the bibliography's entries "[HRTZ04]", so a reader cannot find a citation's entry by
eye. This registers the pybtex formatting style ``authoryear``: pybtex's ``unsrt`` entries
sorted by their labels, each labelled "Hastie et al., 2004" (one author: "Jayadeva,
2015"; two: "Amari and Wu, 1999"), with a, b, ... added where two entries would share a label.
An entry whose authors are a label in braces (an unsigned manuscript) keeps that label.
"""

from __future__ import annotations

import unicodedata
from collections import Counter

from pybtex.plugin import register_plugin
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.sorting.author_year_title import SortingStyle


def _last(person) -> str:
    """A person's last name as plain text (LaTeX accents and braces resolved)."""
    return " ".join(part.render_as("text") for part in person.rich_last_names)


def author_year(entry) -> str:
    """The label "Last et al., Year" of a pybtex entry."""
    persons = entry.persons.get("author") or entry.persons.get("editor") or []
    etal = bool(persons) and _last(persons[-1]) == "others"  # "A and others"
    if etal:
        persons = persons[:-1]
    if not persons:
        who = entry.fields.get("key") or entry.key
    elif etal:
        who = f"{_last(persons[0])} et al."
    elif len(persons) == 1:
        who = _last(persons[0])
    elif len(persons) == 2:
        who = f"{_last(persons[0])} and {_last(persons[1])}"
    else:
        who = f"{_last(persons[0])} et al."
    year = entry.fields.get("year", "")
    return f"{who}, {year}" if year else who


class AuthorYearLabelStyle(BaseLabelStyle):
    def format_labels(self, sorted_entries):
        entries = list(sorted_entries)
        labels = [author_year(e) for e in entries]
        counts, seen = Counter(labels), Counter()
        for label in labels:
            if counts[label] > 1:
                seen[label] += 1
                yield label + "abcdefghijklmnopqrstuvwxyz"[seen[label] - 1]
            else:
                yield label


class AuthorYearSortingStyle(SortingStyle):
    """Entries in the order of their labels (an unsigned entry under its label's letter)."""

    def sorting_key(self, entry):
        # (accents stripped: "Gärtner" sorts as "Gartner")
        plain = unicodedata.normalize("NFKD", author_year(entry).lower())
        return ("".join(ch for ch in plain if not unicodedata.combining(ch)),
                entry.fields.get("title", "").lower())


class AuthorYearStyle(UnsrtStyle):
    default_label_style = AuthorYearLabelStyle
    default_sorting_style = AuthorYearSortingStyle


def setup(app):
    register_plugin("pybtex.style.formatting", "authoryear", AuthorYearStyle)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
