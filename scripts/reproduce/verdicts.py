# SPDX-License-Identifier: GPL-2.0-or-later
"""Claims and verdicts of the reproduction experiments (scripts/reproduce/).

Every experiment lists each quantitative claim of the figure it reproduces
with the paper's number, ours, and the criterion (a band on magnitude, not
only a direction), fixed in code before the run. A claim's verdict
("holds") is one of

  True ("yes"), "partly", False ("no")   measured, judged by its criterion
  BY_CONSTRUCTION   the result follows from a parameter chosen from the
                    same figure (by_construction()), or from a counting
                    rule or layout that fixes the measured quantity
                    whatever the device does (by_rule()); the claim's note
                    names the parameter or the rule (claim() refuses one
                    that does not), its "construction" says which kind;
                    never a yes
  PROJECTION        a number computed from measured counters for a
                    configuration that did not run (e.g. another device
                    size); never a yes
  None              not measured (the run failed, or the number is too
                    unstable between rounds to judge: stable())

overall() makes the experiment's verdict from its claims, counting only
the measured ones. A criterion can be written as text with a judging
function (graded, band, factor_of), or as a Criterion (near, at_least,
at_most, rule) whose text and judgement come from the same numbers, so the
page cannot say one thing and the code do another: measure() then builds
the claim.
"""

import math
import statistics


BY_CONSTRUCTION = "by construction"
PROJECTION = "projection"
_HOLDS_VALUES = (True, False, "partly", None, BY_CONSTRUCTION, PROJECTION)

# the page's words for each verdict, in the order the summary counts them
HOLDS = {True: "yes", "partly": "partly", False: "no", BY_CONSTRUCTION: "by construction",
         PROJECTION: "projection", None: "not measured"}
LABELS = ("yes", "partly", "no", "by construction", "projection", "not measured")


def _missing(x):
    return x is None or (isinstance(x, float) and math.isnan(x))


def claim(text, paper, ours, criterion, holds, note=""):
    """One quantitative claim: the paper's text and number, ours, the
    criterion (fixed before the run; a string or a Criterion), and whether
    it holds: True, False, "partly", None (not measured), BY_CONSTRUCTION
    (note must name the parameter chosen from the figure) or PROJECTION
    (note says what it is computed from)."""
    if not any(holds is v or isinstance(v, str) and holds == v for v in _HOLDS_VALUES):
        raise ValueError("claim '%s': holds is %r; it must be True, False, 'partly', None, "
                         "BY_CONSTRUCTION or PROJECTION" % (text, holds))
    if holds in (BY_CONSTRUCTION, PROJECTION) and not note:
        raise ValueError("claim '%s' is %s: its note must name %s" % (
            text, holds, "the parameter chosen from the paper's figure"
            if holds == BY_CONSTRUCTION else "what the projection is computed from"))
    if isinstance(criterion, Criterion):
        criterion = criterion.text
    return {"claim": text, "paper": paper, "ours": ours, "criterion": criterion,
            "holds": holds, "note": note}


# what a by-construction claim follows from (its "construction" field)
PARAMETER = "parameter"
RULE = "rule"


def by_construction(text, paper, ours, criterion, parameter, measured=True, would_hold=None):
    """A claim whose result follows from parameter, a setting chosen from the
    same figure (e.g. "kvftl pm983 preset page_data_bytes = 25088, from Fig.
    5's dips"). measured=False: the run did not produce ours (not measured).
    would_hold, when given, is what the criterion says of ours (shown, not
    counted: a by-construction result agreeing with the paper is no evidence)."""
    note = "follows from " + parameter
    if measured and would_hold is not None:
        note += "; the criterion would say " + HOLDS[would_hold]
    c = claim(text, paper, ours, criterion, BY_CONSTRUCTION if measured else None, note=note)
    c["construction"] = PARAMETER
    return c


def by_rule(text, paper, ours, criterion, rule_text, measured=True, would_hold=None, note=""):
    """A claim whose measured quantity is fixed by a counting rule or a layout
    (rule_text names it, e.g. "dma-unit-bytes = 4096: a PRP Store of up to 4 KiB
    moves one 4 KiB unit"), so no run of the experiment could give another
    number: by construction, never a yes. measured and would_hold as in
    by_construction()."""
    if not rule_text:
        raise ValueError("claim '%s' follows from a rule: name the rule" % text)
    text_note = "fixed by a counting rule or layout: " + rule_text
    if measured and would_hold is not None:
        text_note += "; the criterion would say " + HOLDS[would_hold]
    if note:
        text_note += "; " + note
    c = claim(text, paper, ours, criterion, BY_CONSTRUCTION if measured else None, note=text_note)
    c["construction"] = RULE
    c["can_fail"] = False
    return c


def revised(c, was_holds, was_criterion, why):
    """Claim c under a criterion that replaced an earlier one: the earlier
    criterion and the verdict it gave (was_holds) stay on the page beside the
    new, with why it changed."""
    c["was"] = {"holds": was_holds, "criterion": str(was_criterion), "why": why}
    return c


def projection(text, paper, ours, criterion, basis, would_hold=None):
    """A computed projection (basis: what from): labelled, never counted as
    a yes; would_hold, when given, is what the criterion says of the number."""
    note = "computed from " + basis
    if would_hold is not None:
        note += "; the criterion would say " + HOLDS[would_hold]
    return claim(text, paper, ours, criterion, PROJECTION, note=note)


# ---- criteria ---------------------------------------------------------------

def band(x, lo, hi):
    """True when lo <= x <= hi; None when x is missing."""
    if _missing(x):
        return None
    return lo <= x <= hi


def graded(x, yes, partly):
    """True when yes(x), "partly" when partly(x), else False; None if x is missing."""
    if _missing(x):
        return None
    if yes(x):
        return True
    if partly(x):
        return "partly"
    return False


def factor_of(x, paper, f):
    """Within a factor f of the paper's number: paper/f <= x <= paper*f."""
    return band(x, paper / f, paper * f)


class Criterion:
    """A criterion's text and its judgement, made from the same numbers."""

    def __init__(self, text, yes, partly=None):
        self.text = text
        self._yes = yes
        self._partly = partly or (lambda x: False)

    def judge(self, x):
        return graded(x, self._yes, self._partly)

    def __str__(self):
        return self.text


def _g(x):
    return "%.3g" % x


def near(paper, factor, partly=None, partly_text=None, unit="x"):
    """yes when x is within a factor `factor` of paper (paper/factor to
    paper*factor); partly when partly(x) (e.g. the direction holds), said by
    partly_text; else no."""
    lo, hi = paper / factor, paper * factor
    text = "yes if within a factor %s of %s%s (%s-%s%s)" % (
        _g(factor), _g(paper), unit, _g(lo), _g(hi), unit)
    text += "; partly if %s" % partly_text if partly else ""
    return Criterion(text + "; else no", lambda x: lo <= x <= hi, partly)


def within(paper, tol, partly_tol=None, unit=""):
    """yes when |x - paper| <= tol x paper (a relative tolerance); partly
    within partly_tol; else no."""
    def ok(t):
        return lambda x: abs(x - paper) <= t * abs(paper)
    text = "yes if within %g %% of %s%s (%s-%s%s)" % (
        100 * tol, _g(paper), unit, _g(paper * (1 - tol)), _g(paper * (1 + tol)), unit)
    if partly_tol:
        text += "; partly within %g %% (%s-%s%s)" % (
            100 * partly_tol, _g(paper * (1 - partly_tol)), _g(paper * (1 + partly_tol)), unit)
    return Criterion(text + "; else no", ok(tol), ok(partly_tol) if partly_tol else None)


def at_least(yes, partly=None, unit=""):
    text = "yes if >= %s%s" % (_g(yes), unit)
    if partly is not None:
        text += "; partly if >= %s%s" % (_g(partly), unit)
    return Criterion(text + "; else no", lambda x: x >= yes,
                     (lambda x: x >= partly) if partly is not None else None)


def at_most(yes, partly=None, unit=""):
    text = "yes if <= %s%s" % (_g(yes), unit)
    if partly is not None:
        text += "; partly if <= %s%s" % (_g(partly), unit)
    return Criterion(text + "; else no", lambda x: x <= yes,
                     (lambda x: x <= partly) if partly is not None else None)


def rule(text, yes, partly=None):
    """Any criterion: its text and the functions that judge it."""
    return Criterion(text, yes, partly)


def fnum(x, fmt="%.2f"):
    """x by fmt; "n/a" when missing, "inf" when infinite."""
    if _missing(x):
        return "n/a"
    if x == "inf" or (isinstance(x, float) and math.isinf(x)):
        return "inf" + (fmt[-1] if fmt.endswith("x") else "")
    return fmt % x


def can_fail(crit, lo, hi, integer=False):
    """Does crit give anything but yes to some value in [lo, hi]? lo and hi may
    be infinite; integer: the quantity is a count, only integers are tried."""
    if lo > hi:
        raise ValueError("span %r-%r is empty" % (lo, hi))
    if integer:
        a = int(math.ceil(lo)) if not math.isinf(lo) else -10 ** 6
        b = int(math.floor(hi)) if not math.isinf(hi) else 10 ** 6
        if b - a > 10 ** 6:
            raise ValueError("span %r-%r has too many counts to try" % (lo, hi))
        return any(crit.judge(x) is not True for x in range(a, b + 1))
    a = lo if not math.isinf(lo) else -1e12
    b = hi if not math.isinf(hi) else 1e12
    n = 20000
    return any(crit.judge(a + (b - a) * i / n) is not True for i in range(n + 1))


def measure(text, paper, x, crit, fmt="%.2f", note="", span=None, integer=False):
    """A measured claim: ours is fmt % x, the verdict crit.judge(x). span=(lo,
    hi): the values this experiment's measured quantity can take (integer:
    counts only); the claim records it and can_fail, whether crit rejects
    any of them."""
    c = claim(text, paper, "n/a" if _missing(x) else fmt % x, crit, crit.judge(x), note)
    if span is not None:
        c["span"] = [span[0], span[1]]
        c["can_fail"] = can_fail(crit, span[0], span[1], integer)
    return c


# ---- numbers that move between rounds (guest wall clock) --------------------

def spread(values):
    """min, median, max and (max - min) / median of the rounds' numbers."""
    vs = [v for v in values if not _missing(v)]
    if not vs:
        return None
    med = statistics.median(vs)
    return {"n": len(vs), "min": min(vs), "median": med, "max": max(vs),
            "spread": (max(vs) - min(vs)) / med if med else float("nan")}


def spread_text(s, fmt="%.2f"):
    if not s:
        return "n/a"
    return ("median " + fmt + " (" + fmt + "-" + fmt + ", spread %.0f %% over %d rounds)") % (
        s["median"], s["min"], s["max"], 100 * s["spread"], s["n"])


def stable(text, paper, values, crit, fmt="%.2f", note=""):
    """A claim on a number measured in several rounds (guest wall clock): ours
    is the median with its spread; the verdict is the criterion's when every
    round gets the same one, else not measured (a verdict that flips between
    rounds is not a verdict), with the rounds' verdicts in the note."""
    s = spread(values)
    if not s:
        return claim(text, paper, "n/a", crit, None, note)
    each = [crit.judge(v) for v in values if not _missing(v)]
    ours = spread_text(s, fmt)
    if len(set(each)) == 1:
        return claim(text, paper, ours, crit, each[0], note)
    flips = "verdict flips between rounds (%s)" % ", ".join(HOLDS[h] for h in each)
    return claim(text, paper, ours, crit, None, (note + "; " if note else "") + flips)


# ---- an experiment's verdict and the page's counts --------------------------

def overall(claims):
    """yes when every measured claim holds, no when none does, partly
    otherwise. Claims by construction, projections and claims not measured
    are left out; with no measured claim the verdict is BY_CONSTRUCTION if
    one is, else PROJECTION if one is, else None (not measured)."""
    measured = [c["holds"] for c in claims if c["holds"] in (True, False, "partly")]
    if not measured:
        kinds = {c["holds"] for c in claims}
        if BY_CONSTRUCTION in kinds:
            return BY_CONSTRUCTION
        if PROJECTION in kinds:
            return PROJECTION
        return None
    if all(h is True for h in measured):
        return True
    if all(h is False for h in measured):
        return False
    return "partly"


def label(holds):
    """The page's word for a verdict (yes, partly, no, by construction, ...)."""
    return HOLDS.get(holds, str(holds))


def counts(verdicts):
    """{label: n} over verdicts (claims' holds or experiments' met), every label present."""
    out = dict((lb, 0) for lb in LABELS)
    for h in verdicts:
        lb = label(h)
        out[lb] = out.get(lb, 0) + 1
    return out


def counts_text(c, what):
    """ "3 yes, 1 partly, ... of 9 claims" with every label, zeros included."""
    total = sum(c.values())
    return "%s (of %d %s)" % (", ".join("%d %s" % (c[lb], lb) for lb in LABELS), total, what)


def was_text(c):
    """The page's sentence for a claim whose criterion replaced an earlier one."""
    w = c.get("was")
    if not w:
        return ""
    return "; was %s by the earlier criterion \"%s\", changed because %s" % (
        label(w["holds"]), w["criterion"], w["why"])


def claims_table(claims):
    rows = [["claim", "paper", "ours", "criterion", "verdict"]]
    for c in claims:
        extra = ((c.get("note") or "") + was_text(c)).lstrip("; ")
        rows.append([c["claim"], c["paper"], c["ours"], c["criterion"],
                     label(c["holds"]) + (" (%s)" % extra if extra else "")])
    return rows


def summarize(claims):
    """'n of m measured claims hold (k partly); b by construction; p
    projection; u not measured'."""
    c = counts(h["holds"] for h in claims)
    measured = c["yes"] + c["partly"] + c["no"]
    s = "%d of %d measured claims hold" % (c["yes"], measured)
    if c["partly"]:
        s += ", %d partly" % c["partly"]
    for lb in ("by construction", "projection", "not measured"):
        if c[lb]:
            s += "; %d %s" % (c[lb], lb)
    return s
