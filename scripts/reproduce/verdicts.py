# SPDX-License-Identifier: GPL-2.0-or-later
"""Claims and verdicts of the reproduction experiments (scripts/reproduce/).

Every experiment lists each quantitative claim of the figure it reproduces
with the paper's number, ours, and the criterion (a band on magnitude, not
only a direction), fixed in code before the run. A claim that follows from
a parameter chosen from the same figure is BY_CONSTRUCTION (name the
parameter in its note), never True; a computed projection says so in its
claim text. overall() makes the experiment's verdict from its claims.
"""

import math


BY_CONSTRUCTION = "by construction"


def claim(text, paper, ours, criterion, holds, note=""):
    """One quantitative claim: the paper's text and number, ours, the
    criterion (fixed before the run), and whether it holds: True, False,
    "partly", None (not measured) or BY_CONSTRUCTION."""
    return {"claim": text, "paper": paper, "ours": ours, "criterion": criterion,
            "holds": holds, "note": note}


def band(x, lo, hi):
    """True when lo <= x <= hi; None when x is missing."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return lo <= x <= hi


def graded(x, yes, partly):
    """True when yes(x), "partly" when partly(x), else False; None if x is missing."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    if yes(x):
        return True
    if partly(x):
        return "partly"
    return False


def factor_of(x, paper, f):
    """Within a factor f of the paper's number: paper/f <= x <= paper*f."""
    return band(x, paper / f, paper * f)


def overall(claims):
    """yes when every measured claim holds, no when none does (partly counts
    half), partly otherwise; None when nothing was measured. Claims that hold
    by construction are left out; if they are all there is, the verdict is
    BY_CONSTRUCTION."""
    judged = [c["holds"] for c in claims if c["holds"] is not None]
    if not judged:
        return None
    real = [h for h in judged if h != BY_CONSTRUCTION]
    if not real:
        return BY_CONSTRUCTION
    if all(h is True for h in real):
        return True
    if all(h is False for h in real):
        return False
    return "partly"


HOLDS = {True: "yes", False: "no", "partly": "partly", None: "not measured",
         BY_CONSTRUCTION: BY_CONSTRUCTION}


def claims_table(claims):
    rows = [["claim", "paper", "ours", "criterion (fixed before the run)", "holds"]]
    for c in claims:
        rows.append([c["claim"], c["paper"], c["ours"], c["criterion"], HOLDS[c["holds"]] + (
            " (%s)" % c["note"] if c.get("note") else "")])
    return rows



def summarize(claims):
    """'n of m claims hold (k partly)' over the measured, non-construction claims."""
    real = [c["holds"] for c in claims if c["holds"] not in (None, BY_CONSTRUCTION)]
    yes = sum(1 for h in real if h is True)
    part = sum(1 for h in real if h == "partly")
    nm = sum(1 for c in claims if c["holds"] is None)
    s = "%d of %d claims hold" % (yes, len(real))
    if part:
        s += ", %d partly" % part
    if nm:
        s += "; %d not measured" % nm
    return s
