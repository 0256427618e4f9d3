"""Step 3 of the synthetic error attribution: audit records and response texts from templates.

:class:`Item` is what a record needs to know about its item; :func:`kinds_for` names the
template kinds that realise an attribution class under the rules of
:mod:`voxmem_analysis.analysis.attribution_rules`; :func:`record_for` writes one record (the
``FORMATS.md`` section 4 fields) and its response text.
"""
from __future__ import annotations

import json

import numpy as np

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.synth.attribution_targets import ENV, PARA, SPK

__all__ = ["Item", "record_for", "kinds_for", "pick", "specific_value", "CAPABILITY_REFUSALS", "EVIDENCE_REFUSALS",
           "FAIL_ERRORS", "TOPICS", "FACTS", "TEMPLATES"]

# ----------------------------------------------------------------------------- vocabulary for records
_SOUNDS = (
    "dog barking", "rain on a window", "crackling fire", "clock ticking", "church bells", "car engine idling",
    "hen clucking", "rooster crowing", "vacuum cleaner", "keyboard typing", "knocking on a door", "siren",
    "chainsaw", "water drops", "crickets", "thunder", "washing machine", "footsteps", "sea waves",
    "birds chirping", "train passing", "helicopter", "glass breaking", "mouse clicks", "pouring water", "wind",
    "crying baby", "airplane overhead", "clapping", "snoring", "coughing", "frog croaking", "door creaking",
    "cat meowing", "cow mooing", "fireworks", "hand saw", "sheep bleating", "toilet flushing", "brushing teeth",
)
_DELIVERIES = (
    "hesitant", "excited", "sad and slow", "angry", "whispering", "fast-paced", "slow and deliberate", "emphatic",
    "laughing", "tense", "confident", "surprised", "reflective and slow", "nervous", "cheerful", "tired",
    "frustrated", "urgent", "sarcastic", "anxious", "playful", "solemn",
)
_GENERIC = {
    SPK: ("one of the users", "the usual person", "someone from the earlier chats", "a regular user"),
    PARA: ("clear", "neutral", "steady", "calm and composed", "a normal conversational tone", "relaxed and even"),
    ENV: ("some background noise", "general ambient noise", "a quiet room", "indistinct sounds", "faint room noise"),
}
TOPICS = (
    "the grocery errands", "the weekend hiking trip", "the report review", "the hallway cabinet",
    "the garden shed repair", "the birthday dinner", "the car service", "the new phone plan",
    "the dentist appointment", "the book club pick", "the kitchen renovation", "the gym schedule",
    "the flight to Lisbon", "the quarterly budget", "the neighbour's party", "the piano lessons",
    "the moving boxes", "the tax forms", "the dog's vet visit", "the photo album", "the team offsite",
    "the bike repair", "the recipe swap", "the laundry rota", "the produce pickup", "the storage unit",
)
FACTS = (
    "lower drawer", "market route", "canal route", "Thursday afternoon", "the blue folder", "hanging caddy",
    "second shelf", "the 7:40 train", "the green notebook", "Aunt Rosa", "the corner cafe", "room 214",
    "the oak table", "three o'clock", "the red suitcase", "platform nine", "the back porch", "the left cupboard",
    "the Friday meeting", "the spare bedroom", "the north entrance", "the pharmacy on Elm Street",
    "the striped umbrella", "the window seat", "the late shift", "the ferry", "the top bunk", "the shared drive",
)
_QUOTES = (
    "for {topic}, maybe we ought to choose {fact}",
    "I think {fact} makes the most sense for {topic}",
    "let's just go with {fact}, at least for {topic}",
    "honestly {fact} would be easier for {topic}",
    "I put it in {fact} after we sorted out {topic}",
    "we agreed on {fact} when we talked about {topic}",
)
_NONE_RESPONSES = (
    "I have noted that down.", "Thanks for letting me know, I'll keep that in mind.", "Got it.",
    "Sure, I can help with that whenever you're ready.", "Okay, noted.",
)
_DENIALS = {
    SPK: ("It was just you speaking in all of those chats.",),
    PARA: ("Nothing stood out about how you spoke.", "Your delivery was the same as always."),
    ENV: ("There was no background sound in that chat.", "It was completely silent behind you."),
}
EVIDENCE_REFUSALS = (
    "insufficient evidence", "Insufficient evidence.", "insufficient evidence.",
    "The conversation does not contain enough information to determine this.",
    "There is not enough information in our previous conversations to answer that.",
    "I can't determine that from the earlier sessions.",
    "That cannot be determined from the conversation history.",
    "I don't know; the sessions don't mention it.",
)
CAPABILITY_REFUSALS = (
    "I'm sorry, but I cannot hear audio, so I can't tell how anything sounded.",
    "I don't have access to previous conversations.",
    "As an AI text model, I am unable to listen to audio recordings.",
    "I have no memory of earlier sessions, so I cannot answer that.",
    "I cannot process the audio from previous chats.",
)
FAIL_ERRORS = (
    "generation failed: timeout", "generation failed: timeout after 600 s", "generation failed: empty output",
    "generation failed: worker crashed (CUDA out of memory)", "generation failed: connection reset by peer",
)
_NUM_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


# ----------------------------------------------------------------------------- step 3: records
def pick(rng, seq):
    return seq[int(rng.integers(len(seq)))]


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:] if s else s


class Item:
    """What a record needs to know about its item."""

    def __init__(self, row: dict, rng: np.random.Generator):
        self.ev = row["_ev"]
        self.sub = row["_sub"]
        self.answer_type = row.get("answer_type")
        sc = row.get("session_count")
        self.n_sessions = int(sc) if isinstance(sc, (int, np.integer)) and sc > 3 else int(rng.integers(70, 121))
        evs = row.get("evidence_session_indices")
        if isinstance(evs, str):
            try:
                evs = json.loads(evs)
            except json.JSONDecodeError:
                evs = None
        if evs is not None and not isinstance(evs, (list, tuple)):
            evs = list(evs)
        if evs:
            self.evidence = sorted({int(x) + (1 if min(evs) == 0 else 0) for x in evs})
        else:
            k = 1 if tx.SUBTYPE_OPERATION.get(self.sub) == "information_extraction" else int(rng.integers(2, 4))
            self.evidence = sorted(int(x) for x in rng.choice(np.arange(1, self.n_sessions + 1), size=k, replace=False))
        self.gold = _gold_text(row.get("gold_json"))

    def other_session(self, rng) -> int:
        while True:
            k = int(rng.integers(1, self.n_sessions + 1))
            if k not in self.evidence:
                return k

    def evidence_session(self, rng) -> int:
        return int(pick(rng, self.evidence))


def _gold_text(g) -> str | None:
    if g is None:
        return None
    try:
        v = json.loads(g) if isinstance(g, str) else g
    except json.JSONDecodeError:
        return str(g)
    if isinstance(v, dict):
        v = v.get("answer", next(iter(v.values()), None))
    if isinstance(v, list):
        return " -> ".join(str(x) for x in v)
    return None if v is None else str(v)


def _cue_word(ev: str) -> str:
    return {SPK: "voice", PARA: "delivery", ENV: "sound"}[ev]


def _attribute_value(ev: str, rng) -> str:
    if ev == SPK:
        return f"Speaker {int(rng.integers(1, 7))}"
    if ev == PARA:
        return pick(rng, _DELIVERIES)
    return pick(rng, _SOUNDS)


def specific_value(it: Item, rng) -> str:
    """A concrete answer of the kind the question asks for."""
    s, ev = it.sub, it.ev
    if s == "counting":
        return str(int(rng.integers(0, 9)))
    if s == "matching_resolution":
        return pick(rng, ("yes", "no", "same", "different"))
    if s == "aggregation_comparison":
        return pick(rng, ("the first group", "the second group", "same", "different",
                           f"the {_attribute_value(ev, rng)} group"))
    if s == "evolution_transition":
        k = int(rng.integers(2, 4))
        return " -> ".join(_attribute_value(ev, rng) for _ in range(k))
    if s == "cue_to_fact":
        return pick(rng, FACTS)
    if s == "context_to_cue" and ev == SPK:
        return pick(rng, ("yes, the same speaker", "no, a different speaker", f"Speaker {int(rng.integers(1, 7))}"))
    return _attribute_value(ev, rng)


def _quote(rng, fact: str | None = None) -> str:
    return pick(rng, _QUOTES).format(topic=pick(rng, TOPICS), fact=fact or pick(rng, FACTS))


def _marked(ev: str, value: str) -> str:
    """How the auditor's transcript marks a cue value (F.5 prompt)."""
    if ev == ENV:
        return f"[background sound in this session: {value}]"
    if ev == PARA:
        return f"<|emotion:{value}|>"
    return f"{value}'s voice"


def _specific_response(answer: str, it: Item, rng) -> str:
    if it.sub == "counting":
        return pick(rng, (f"{answer}", f"There were {answer}.", f"{answer} times.",
                           f"There are {answer} chats that fit the specified condition."))
    if it.sub == "matching_resolution":
        tail = {SPK: "the same voice", PARA: "the same vocal delivery", ENV: "the same background sound"}[it.ev]
        return pick(rng, (f"{_cap(answer)}.", f"{_cap(answer)}, both chats are linked by {tail}."
                           if answer in ("yes", "same") else f"{_cap(answer)}, they do not share {tail}."))
    return pick(rng, (f"{_cap(answer)}.", answer, f"It was {answer}.", f"I believe it was {answer}.",
                       f"{_cap(answer)}, as far as I remember.", f"The answer is {answer}."))


def _tmpl_rec_generic(it: Item, rng, rec: dict, ev: str, cue: str) -> tuple[dict, str]:
    g = pick(rng, _GENERIC[ev])
    rec.update(commits="generic", answer=g,
               why=f'The response only says "{g}", which would fit any session; no specific {cue} is named.')
    resp = {SPK: f"It was {g}.", PARA: f"You sounded {g}.", ENV: f"There was {g}."}[ev]
    if it.sub == "counting":
        resp = pick(rng, ("A few times.", "Several times, I think.", "Quite often."))
        rec["answer"] = resp.rstrip(".").lower()
        rec["why"] = f'"{resp}" gives no number; the response never identifies the {cue} to count.'
    return rec, resp


def _tmpl_rec_off_type(it: Item, rng, rec: dict, ev: str, cue: str) -> tuple[dict, str]:
    t1, t2 = pick(rng, TOPICS), pick(rng, TOPICS)
    if it.sub in ("aggregation_comparison", "matching_resolution"):
        resp = (f"The two groups are similar in their emphasis on {t1}, but the other thread "
                f"also mentions {t2}.")
        why = f"The response compares what the threads are about ({t1}, {t2}); no {cue} is named."
    else:
        resp = pick(rng, (f"That conversation was about {t1}.", f"You were talking about {t1}."))
        why = f"Asked about the {cue}, the response names the topic of the conversation ({t1})."
    rec.update(commits="off_type", answer=t1, why=why)
    return rec, resp


def _tmpl_rec_none(it: Item, rng, rec: dict, ev: str, cue: str) -> tuple[dict, str]:
    if rng.random() < 0.5:
        resp = pick(rng, _NONE_RESPONSES)
        why = f'The response is a bare acknowledgement ("{resp}") and commits to nothing.'
    else:
        resp = pick(rng, _DENIALS[ev])
        why = f'The response flatly denies any {cue} ("{resp}") although an [EVIDENCE] session carries one.'
    rec.update(commits="none", why=why)
    return rec, resp


def _tmpl_rec_other_session(it: Item, rng, rec: dict, ev: str, cue: str) -> tuple[dict, str]:
    k, ans = it.other_session(rng), specific_value(it, rng)
    rel = "count_off" if it.sub == "counting" else pick(rng, ("same_value_other_session", "same_value_other_session", "unrelated"))
    if it.sub == "counting":
        ans = str(int(rng.integers(4, 12)))
        why = (f"Session {k} [DISTRACTOR] is one of {ans} chats on the same topic (\"{_quote(rng)}\"); the response "
               f"counted the topic, not the {cue} condition.")
    elif it.sub in ("context_to_cue", "latest_state", "historical_state"):
        why = (f"Session {k} [DISTRACTOR] carries {_marked(ev, ans)}; the answer comes from there, not from the "
               "session the question points to.")
    else:
        why = (f'The answer "{ans}" matches Session {k} [DISTRACTOR], which is outside the evidence chain '
               f'("{_quote(rng)}").')
    rec.update(answer=ans, source="other_session", source_session=k, relation=rel, why=why)
    return rec, _specific_response(ans, it, rng)


def _tmpl_rec_wrong_value(it: Item, rng, rec: dict, ev: str, cue: str) -> tuple[dict, str]:
    k, ans = it.evidence_session(rng), specific_value(it, rng)
    if it.sub == "cue_to_fact":
        why = (f'Session {k} [EVIDENCE] mentions "{ans}" in passing, but the fact the question asks about is '
               f'another one ("{_quote(rng)}").')
    elif it.sub in ("matching_resolution", "aggregation_comparison"):
        why = f'Session {k} [EVIDENCE] was found, but its {cue} was misread, so the response answers "{ans}".'
    else:
        why = (f'Session {k} [EVIDENCE] is the session the question is about, but the response reports "{ans}" '
               f"for it; the {cue} there is a different one.")
    rec.update(answer=ans, source="evidence", source_session=k,
               relation=pick(rng, ("wrong_value_same_session", "wrong_value_same_session", "unrelated")), why=why)
    return rec, _specific_response(ans, it, rng)


def _tmpl_bind_speaker(it: Item, rng, rec: dict, ev: str, cue: str) -> tuple[dict, str]:
    # other_speaker binds only content read from an evidence session, or on a cue-keyed
    # question (rule 5 vs rules 6-7 of voxmem_analysis.analysis.attribution.RULES)
    cue_keyed = it.sub in ("cue_to_fact", "matching_resolution")
    src = pick(rng, ("evidence", "other_session")) if cue_keyed else "evidence"
    k = it.evidence_session(rng) if src == "evidence" else it.other_session(rng)
    who = int(rng.integers(1, 7))
    if it.sub in ("cue_to_fact", "matching_resolution"):
        ans = pick(rng, FACTS) if it.sub == "cue_to_fact" else specific_value(it, rng)
        why = (f'"{_quote(rng, ans if it.sub == "cue_to_fact" else None)}" is said by Speaker {who} in Session {k}, '
               "not by the speaker the question refers to.")
    else:
        ans = f"Speaker {who}"
        why = (f"Speaker {who} is the voice of another user's turns in Session {k}; the response attaches the "
               "content the question asks about to that speaker.")
    rec.update(answer=ans, source=src, source_session=k, relation="other_speaker",
               evidence_recovered=bool(rng.random() < 0.4), why=why)
    return rec, _specific_response(ans, it, rng)


def _tmpl_bind_cue_keyed(it: Item, rng, rec: dict, ev: str, cue: str) -> tuple[dict, str]:
    k, ev_k = it.other_session(rng), it.evidence_session(rng)
    ans = specific_value(it, rng)
    q = _quote(rng, ans if it.sub == "cue_to_fact" else None)
    rec.update(answer=ans, source="other_session", source_session=k,
               relation=pick(rng, ("same_value_other_session", "same_value_other_session", "unrelated")),
               why=f'The line is verbatim from Session {k} [DISTRACTOR] ("{q}"), but the question\'s {cue} '
                   f"points to Session {ev_k}; the system matched on topic.")
    return rec, _specific_response(ans, it, rng)


def _tmpl_op_cue_named(it: Item, rng, rec: dict, ev: str, cue: str) -> tuple[dict, str]:
    val = _attribute_value(ev, rng)
    what = {"counting": "give the count asked for", "matching_resolution": "decide whether the sessions match",
            "aggregation_comparison": "compare the two groups", "evolution_transition": "track how it changed",
            "latest_state": "say which state is the latest", "historical_state": "say which state held at that time",
            }.get(it.sub, "answer the question asked")
    resp = {SPK: f"That was {val}'s voice.", PARA: f"You sounded {val} in that session.",
            ENV: f"I heard {val} in the background."}[ev]
    rec.update(commits="off_type", answer=val, evidence_recovered=True,
               why=f'The response names the right {cue} ("{val}") but does not {what}.')
    return rec, resp


def _tmpl_op_count_cue(it: Item, rng, rec: dict, ev: str, cue: str) -> tuple[dict, str]:
    val = _attribute_value(ev, rng)
    k = it.evidence_session(rng)
    rec.update(answer=val, evidence_recovered=True, source="evidence", source_session=k,
               why=f'The response names the {cue} of Session {k} ("{val}") instead of counting its occurrences.')
    return rec, {SPK: f"{val}.", PARA: f"You sounded {val}.", ENV: f"I heard {val}."}[ev]


def _tmpl_op_count_off(it: Item, rng, rec: dict, ev: str, cue: str) -> tuple[dict, str]:
    true_n = max(2, len(it.evidence))
    ans = str(max(0, true_n + pick(rng, (-2, -1, 1, 2))))
    sess = ", ".join(str(x) for x in it.evidence[:-1]) + f" and {it.evidence[-1]}" if len(it.evidence) > 1 \
        else str(it.evidence[0])
    rec.update(answer=ans, evidence_recovered=True, source="evidence", source_session=it.evidence[0],
               relation="count_off",
               why=f"The qualifying mentions are in Session(s) {sess}; the response counts {ans}.")
    return rec, _specific_response(ans, it, rng)


def _tmpl_op_verdict(it: Item, rng, rec: dict, ev: str, cue: str) -> tuple[dict, str]:
    ans = pick(rng, ("yes", "no", "same", "different"))
    a, b = (it.evidence + [it.other_session(rng)])[:2]
    d1, d2 = _attribute_value(ev, rng), _attribute_value(ev, rng)
    rec.update(answer=ans, evidence_recovered=True, source="evidence", source_session=a,
               relation=pick(rng, ("wrong_value_same_session", "unrelated")),
               why=f"Session {a} carries {d1} and Session {b} {d2}; both were described but the comparison "
                   "came out wrong.")
    return rec, _specific_response(ans, it, rng)


def _tmpl_op_wrong_time(it: Item, rng, rec: dict, ev: str, cue: str) -> tuple[dict, str]:
    k = it.evidence_session(rng)
    ans = _attribute_value(ev, rng)
    rel = "later_state" if it.sub == "historical_state" and rng.random() < 0.5 else "earlier_state"
    rec.update(answer=ans, evidence_recovered=True, source="evidence", source_session=k, relation=rel,
               why=f'"{ans}" is the real state in Session {k}, '
                   f"{'after' if rel == 'later_state' else 'before'} the point in time the question asks about.")
    return rec, _specific_response(ans, it, rng)


def _tmpl_unsupported(it: Item, rng, rec: dict, ev: str, cue: str) -> tuple[dict, str]:
    if it.sub in ("aggregation_comparison", "counting") or rng.random() < 0.3:
        k = int(rng.integers(2, 5))
        things = {SPK: "different speakers", PARA: "sessions with a raised voice", ENV: "sessions with kitchen sounds"}[ev]
        ans = f"{k} {things}"
        resp = (f"There are {k} {things} and {k} without, so both groups have an equal count of {k}."
                if it.sub == "aggregation_comparison" else f"I counted {k} {things}.")
        if it.sub == "counting":
            ans = str(k)
        why = f"The response invents an inventory ({k} {things}) that no session has."
    else:
        ans = specific_value(it, rng) if it.sub != "cue_to_fact" else pick(rng, FACTS)
        resp = _specific_response(ans, it, rng)
        why = f'No session mentions "{ans}"; the answer appears nowhere in the conversation.'
    rec.update(answer=ans, source="absent", why=why)
    return rec, resp


def _tmpl_not_attributable(it: Item, rng, rec: dict, ev: str, cue: str) -> tuple[dict, str]:
    g = it.gold or specific_value(it, rng)
    k = it.evidence_session(rng)
    ans = pick(rng, (g, f"the {g}" if not g.lower().startswith("the ") else g, _cap(g)))
    rec.update(answer=ans, evidence_recovered=True, source="evidence", source_session=k, relation="matches_gold",
               why=f'The committed answer "{ans}" is equivalent to the reference; Session {k} [EVIDENCE] supports it.')
    return rec, _specific_response(ans, it, rng)


def _tmpl_truncated(it: Item, rng, rec: dict, ev: str, cue: str) -> tuple[dict, str]:
    a, b = sorted(it.evidence + [it.other_session(rng)])[:2]
    resp = pick(rng, (
        f"Wait, look at the timestamps: session {a} is the earliest, and the {cue} shows up again in session {b}, so the",
        f"Let me go through the sessions one by one. In session {a} you talked about {pick(rng, TOPICS)} and the",
        f"To answer this I need to compare session {a} with session {b}. In the first one the {cue} was",
    ))
    rec.update(commits="truncated", evidence_recovered=bool(rng.random() < 0.3),
               why=f'The text stops mid-sentence ("...{resp[-40:]}") before reaching an answer.')
    return rec, resp


#: Template kind -> function writing (record fields, response text); see :func:`kinds_for`.
TEMPLATES = {
    "rec_generic": _tmpl_rec_generic,
    "rec_off_type": _tmpl_rec_off_type,
    "rec_none": _tmpl_rec_none,
    "rec_other_session": _tmpl_rec_other_session,
    "rec_wrong_value": _tmpl_rec_wrong_value,
    "bind_speaker": _tmpl_bind_speaker,
    "bind_cue_keyed": _tmpl_bind_cue_keyed,
    "op_cue_named": _tmpl_op_cue_named,
    "op_count_cue": _tmpl_op_count_cue,
    "op_count_off": _tmpl_op_count_off,
    "op_verdict": _tmpl_op_verdict,
    "op_wrong_time": _tmpl_op_wrong_time,
    "unsupported": _tmpl_unsupported,
    "not_attributable": _tmpl_not_attributable,
    "truncated": _tmpl_truncated,
}


def record_for(kind: str, it: Item, rng) -> tuple[dict, str]:
    """(audit record fields, response text) for one error of the given template kind."""
    rec = dict(commits="specific", answer=None, evidence_recovered=False, source="none", source_session=None,
               relation="unrelated", why=None)
    return TEMPLATES[kind](it, rng, rec, it.ev, _cue_word(it.ev))


def kinds_for(cls: str, it: Item) -> tuple[tuple[str, float], ...]:
    """Template kinds (with weights) that realise ``cls`` for this item under the rule table."""
    s, ev = it.sub, it.ev
    if cls == "recognition":
        if s == "aggregation_comparison":
            return (("rec_off_type", 0.8), ("rec_generic", 0.1), ("rec_wrong_value", 0.1))
        if s == "counting":
            return (("rec_other_session", 0.6), ("rec_generic", 0.2), ("rec_none", 0.2))
        if s in tx.CUE_KEYED_SUBTYPES:
            return (("rec_generic", 0.25), ("rec_off_type", 0.2), ("rec_none", 0.15), ("rec_wrong_value", 0.4))
        if ev == SPK:
            return (("rec_other_session", 0.5), ("rec_generic", 0.2), ("rec_none", 0.1), ("rec_wrong_value", 0.2))
        return (("rec_generic", 0.35), ("rec_off_type", 0.15), ("rec_none", 0.15), ("rec_other_session", 0.25),
                ("rec_wrong_value", 0.1))
    if cls == "binding":
        if s in tx.CUE_KEYED_SUBTYPES:
            return (("bind_cue_keyed", 0.5), ("bind_speaker", 0.5)) if ev == SPK else (("bind_cue_keyed", 1.0),)
        return (("bind_speaker", 1.0),)
    if cls == "operation":
        if s == "counting":
            return (("op_count_off", 0.7), ("op_count_cue", 0.15), ("op_cue_named", 0.15))
        if s == "matching_resolution":
            return (("op_verdict", 0.85), ("op_cue_named", 0.15))
        return (("op_cue_named", 1.0),)
    if cls == "unsupported":
        return (("unsupported", 1.0),)
    return (("not_attributable", 1.0),)
