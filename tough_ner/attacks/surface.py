"""How a replacement is written where the original stood: its case, acronym style, plural,
possessive, and the words next to it that must agree with it ("the", "a"/"an", "'s"/"'").

These rules read only the sentence; the entity attack applies them to each mention.
"""
from __future__ import annotations

import re
from typing import Optional, Sequence

from .fine_classes import results_line


# ---- case and acronyms ------------------------------------------------------------------------
def case_pattern(text: str) -> str:
    """``upper`` (letters, none lower case), ``lower`` (letters, none upper case), ``mixed``, or
    ``none`` (no cased letter)."""
    if text.isupper():
        return "upper"
    if text.islower():
        return "lower"
    return "mixed" if text.upper() != text.lower() else "none"


def with_case(text: str, pattern: str) -> str:
    return text.upper() if pattern == "upper" else text.lower() if pattern == "lower" else text


def shouting(words: Sequence[str]) -> bool:
    """A headline in capitals: most words of two letters or more have no lower-case letter."""
    cased = [w for w in words if len(w) >= 2 and w.upper() != w.lower()]
    return bool(cased) and sum(w.isupper() for w in cased) * 5 >= len(cased) * 4


def is_acronym(text: str, sentence_shouts: bool) -> bool:
    """One all-capital token of 2-6 letters (dots allowed) in a sentence that is not a headline."""
    letters = text.replace(".", "")
    return (not sentence_shouts and " " not in text and 2 <= len(letters) <= 6 and letters.isalpha()
            and letters.isupper())


def acronym_candidate(text: str) -> bool:
    """A candidate that is an acronym: one all-capital token of 2-6 letters, dots allowed."""
    return is_acronym(text, False)


def acronym_band(letters: int) -> int:
    """Originals of a band take acronyms of that band: two letters (2-3 letters), or three
    and more (one letter more or less, never two)."""
    return 2 if letters == 2 else letters


def fits_band(candidate: str, band: int) -> bool:
    n = len(candidate.replace(".", ""))
    return n in (2, 3) if band == 2 else (n >= 3 and abs(n - band) <= 1)


# Words many names share ("Real Madrid", "Real Betis"): sharing one of them does not make two names one.
COMMON_NAME_WORDS = frozenset("""united city real sporting national republic democratic north south east west new
saint royal university bank party river lake mount island islands club football athletic county state states
kingdom union people's international group company corporation the of and de del la le world cup cups championship
championships open games olympics prix tour marathon rally trophy classic masters league series bowl derby
tournament slam final finals shield plate grand war revolution festival conference summit award prize ministry
department office council commission agency court army police front movement""".split())


def distinctive_words(original: str) -> frozenset:
    """The words of an original a replacement must not repeat, lest it name the same thing
    ("NY RANGERS", "New York Rangers"; "MILWAUKEE", "Milwaukee Bucks"): casefolded, dots
    dropped, three letters or more, none of the words many names share."""
    return frozenset(w for w in original.casefold().replace(".", " ").split() if len(w) >= 3) - COMMON_NAME_WORDS


def pluralize(text: str) -> str:
    return text if text.endswith(("s", "sh", "ch", "x", "z", "ese")) else text + "s"


# ---- "the" ------------------------------------------------------------------------------------
# Place names that take "the" ("the Falkland Islands", "the Danube River", "the Andes").
THE_LAST_WORDS = frozenset("""Islands Isles Republic Emirates States Kingdom Netherlands Philippines Bahamas Maldives
Comoros Seychelles Gambia Grenadines Territories Territory Antilles Sea Ocean River Gulf Channel Strait Straits Canal
Mountains Alps Andes Himalayas Range Highlands Plateau Desert Basin Valley Peninsula Delta Riviera Caucasus Balkans
Sahara Sahel Strip Bank Heights Congo Vatican Urals Rockies Pyrenees Carpathians East Levant Maghreb Caribbean
Baltics Benelux Coast""".split())
# Country acronyms read with "the" ("the US", "the UAE"); others are not ("PNG", "NZ").
THE_ACRONYMS = frozenset("US USA UK UAE USSR DRC PRC DPRK ROK CAR KSA GDR FRG".split())
THE_FIRST_WORDS = ("Republic of ", "Democratic Republic ", "United ", "Gulf of ", "Bay of ", "Sea of ", "Isle of ",
                   "Federated States ", "Holy See", "Cape of ", "Horn of ", "Nordic countries", "Great Lakes")
THE_CLASSES = frozenset("country territory region water mountain continent".split())
DETERMINERS = frozenset("the a an this that these those its his her their our my your 's ' every each "
                        "any no some".split())
# Words after which "the" can be put before a place ("in the Falkland Islands", "beat the Netherlands");
# not after "(": "Ann Lee ( Philippines )" lists a competitor's country.
BEFORE_THE = frozenset("""in of to from for with by at on against between into onto over under across through
toward towards about near than like and or but as via including beat beats beating visit visits visited visiting
leave leaves left enter entered reach reached invade invaded is was are were , ; : --""".split())
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def takes_the(name: str, fine_class: Optional[str]) -> bool:
    """A place name read with "the" before it (by its last or first words)."""
    if fine_class not in THE_CLASSES or name.startswith("The "):
        return False
    return name.split()[-1] in THE_LAST_WORDS or name.startswith(THE_FIRST_WORDS)


def takes_the_as_acronym(name: str, fine_class: Optional[str]) -> bool:
    """An acronym read with "the": a country's acronym listed in ``THE_ACRONYMS``; an
    organisation's acronym, but a company's ("the IMF", "the BOJ"; never "the AES")."""
    if fine_class in ("country", "territory"):
        return name.replace(".", "") in THE_ACRONYMS
    return fine_class not in ("company", "bank", "media")


def article_free(words: Sequence[str]) -> bool:
    """A line written without articles: a headline in capitals, a results line, a dateline."""
    return shouting(words) or results_line(words) or any(DATE.match(w) for w in words[-2:])


def the_after(words: Sequence[str], start: int) -> bool:
    """The mention already has "the" before it."""
    return start > 0 and words[start - 1].lower() == "the"


def the_fits(words: Sequence[str], start: int) -> bool:
    """"the" can be put before the mention: at the sentence's start, or after a preposition, a
    conjunction, punctuation or a verb of movement (never after a determiner or an adjective)."""
    return start == 0 or words[start - 1].lower() in BEFORE_THE


# ---- "a"/"an" and possessives -----------------------------------------------------------------
VOWEL_LETTER_NAMES = frozenset("AEFHILMNORSX")  # letters said with a vowel first ("an FBI agent")


def indefinite_article(word: str) -> str:
    """``a`` or ``an`` before a word, by its first sound as written (a Ugandan, an Uzbek, an MP)."""
    letters = word.replace(".", "")
    if letters.isupper() and len(letters) <= 5:
        return "an" if letters[:1] in VOWEL_LETTER_NAMES else "a"
    lower = word.lower()
    if lower.startswith(("uni", "use", "usu", "uga", "uru", "ukr", "eu", "one", "u.")):
        return "a"
    if lower.startswith(("hour", "honest", "heir")):
        return "an"
    return "an" if lower[:1] in "aeiou" else "a"


def possessive_for(name: str) -> str:
    """The possessive a name takes as the corpus writes it: "'" after a final s ("Islands '"),
    else "'s"."""
    return "'" if name.endswith("s") and not name.endswith("ss") else "'s"
