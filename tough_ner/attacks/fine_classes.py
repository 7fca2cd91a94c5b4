"""The fine class of an original entity, so that its replacement reads naturally in context.

Decided for every original, in this order (the first that decides wins; its name is the
*route* reported with each replacement):

1. ``dictionary``: the string (or its stem without a plural ``s``) is a candidate or a
   lookup-only alias of one of its type's classes (case-insensitive);
2. ``rule``: head words of the string (``University``, ``Bank``, ``Party``, ``Ministry``,
   ``River``, ``Mount``, ``Cup`` ...), a person's token count, demonym suffixes, then the
   context (the next word, ``language``/``province``/``river`` ...; sports vocabulary or a
   results line in the sentence or its document for organisations);
3. ``training``: how the training data uses the string: the longer training mentions of the
   same type that contain it, then the context rules over the training sentences it is
   annotated in;
4. ``fallback``, only when asked for (``entity_attack(..., fallback=...)``): a class given per
   type.  Otherwise an original nothing decides is *unclassified*: the attack keeps it.

Facets refine a class where one class would still read wrongly: the sport of a document
(``document_sports``: its headline names it) for its clubs and competitions, a person's gender
(``Genders``: the given name, a title, a women's or men's event, the names of the document),
a nationality word's form (``demonym_form``).  Rules name classes of the built-in dictionary;
with another dictionary a rule only decides when the type has that class.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

ROUTES = ("dictionary", "rule", "coreference", "training", "fallback")
UNCLASSIFIED = "unclassified"  # the route of an original nothing decides: kept unless a fallback is asked for

# Head words, looked for among the string's tokens (the class of the first listed that is found).
HEADS: Sequence[Tuple[str, frozenset]] = [
    # a legal form says company before any other word ("First Union Capital Markets Corp.")
    ("company", frozenset("Inc Inc. Corp Corp. Corporation Co Co. Ltd Ltd. Plc plc PLC AG SA NV GmbH SpA BV AB ASA "
                          "Oyj".split())),
    ("university", frozenset("University College Institute School Academy Polytechnic Universidad Universite "
                             "Universitat Universiteit Seminary Conservatory".split())),
    ("bank", frozenset("Bank Bancorp Banco Banque Banca Bankers Sparkasse".split())),
    ("party", frozenset("Party Front Movement Democrats Socialists Liberals Conservatives Greens Labour Labor "
                        "Liberation Brigades Tigers Jihad Mujahideen Rebels Guerrillas Militia Alliance Coalition "
                        "Republicans".split())),
    ("international", frozenset("Nations Organisation Organization Federation Confederation Fund "
                                "Community Committee Red Cross".split())),
    ("government", frozenset("Ministry Department Council Commission Court Parliament Senate Assembly Agency "
                             "Police Army Navy Office Bureau Government Cabinet Authority Administration Tribunal "
                             "Forces Guard Treasury Congress Duma Directorate Prosecutor".split())),
    ("media", frozenset("Times News Post Herald Journal Gazette Tribune Daily Radio Television TV Press Magazine "
                        "Telegraph Chronicle Observer Mirror Express Broadcasting Interfax Xinhua".split())),
    ("sports_club", frozenset("FC F.C. AFC SC CF FK SK Rovers Athletic Wanderers Albion County Rangers Sporting "
                              "Dynamo Dinamo Spartak Lokomotiv Olympique Racing Atletico Juniors Hotspur Orient "
                              "Villa Argyle Alexandra Stanley Thistle".split())),
    ("company", frozenset("Inc Inc. Corp Corp. Corporation Co Co. Ltd Ltd. Plc plc PLC AG SA NV Group Holdings "
                          "Industries Airlines Airways Motors Oil Petroleum Energy Electric Steel Mining Telecom "
                          "Pharmaceuticals Systems Technologies Insurance Securities Capital Partners Investments "
                          "Resources Foods Chemicals Enterprises Communications Motor Brewery Stores".split())),
    ("water", frozenset("River Lake Sea Ocean Gulf Bay Strait Channel Canal Lagoon Falls Reservoir".split())),
    ("mountain", frozenset("Mount Mt Mt. Mountains Hills Range Alps Peak Volcano Massif Highlands Plateau".split())),
    ("region", frozenset("Province State County Region District Island Islands Territory Valley Peninsula Coast "
                         "Desert Basin Prefecture Oblast Governorate Department".split())),
    ("event", frozenset("Cup Championship Championships Open Games Olympics Olympiad Prix Tour Marathon Rally "
                        "Trophy Classic Masters League Series Festival War Revolution Conference Summit Derby "
                        "Bowl Week Show Awards Award Elections Election Tournament Grand Slam".split())),
    ("law", frozenset("Act Treaty Accord Accords Agreement Protocol Convention Amendment Charter Code".split())),
    ("facility", frozenset("Airport Stadium Bridge Tunnel Dam Palace Museum Tower Square Street Avenue Hospital "
                           "Arena Park Station Cathedral Church Mosque Temple Prison Hotel Centre Center".split())),
]
# The next word of the sentence naming the class ("the Tana river", "Sindh province").
NEXT_WORDS: Mapping[str, str] = {
    "language": "language", "languages": "language", "speaking": "language", "-speaking": "language",
    "speakers": "language", "dialect": "language", "translation": "language",
    "province": "region", "state": "region", "region": "region", "district": "region", "county": "region",
    "island": "region", "valley": "region", "prefecture": "region",
    "river": "water", "lake": "water", "sea": "water", "coast": "region",
    "city": "city", "town": "city", "capital": "city", "village": "city", "airport": "city", "port": "city",
    "mountains": "mountain", "mountain": "mountain", "peak": "mountain", "volcano": "mountain",
    "party": "party", "government": "government", "ministry": "government", "parliament": "government",
    "bank": "bank", "newspaper": "media", "daily": "media", "agency": "media", "television": "media",
    "university": "university", "club": "sports_club", "team": "sports_club", "coach": "sports_club",
    "striker": "sports_club", "midfielder": "sports_club", "defender": "sports_club", "goalkeeper": "sports_club",
    "quarterback": "sports_club", "manager": "sports_club", "fans": "sports_club",
    "company": "company", "shares": "company", "stock": "company", "group": "company", "firm": "company",
    "spokesman": "company", "chairman": "company", "unit": "company", "subsidiary": "company",
    "novel": "work", "film": "work", "album": "work", "song": "work", "book": "work",
    "faith": "religion", "church": "religion", "mosque": "religion",
}
SPORTS = frozenset("""soccer football cricket tennis golf rugby baseball basketball hockey nhl nba nfl athletics
cycling boxing skiing racing formula motor match matches league division championship cup tournament goal goals
scored score scorer scorers striker midfielder defender goalkeeper coach quarterback innings wicket wickets
runs batting bowling inning pitcher homer touchdown halftime half-time penalty penalties kickoff stadium draw
drew beat beats defeated win wins won lose lost losing victory defeat season playoff playoffs semifinal
semi-final quarter-final final finals fixture fixtures standings played points tries try conversion referee
club clubs team teams squad fans minute minutes leg round""".split())
HEADLINE_SPORTS = frozenset("""SOCCER FOOTBALL CRICKET TENNIS GOLF RUGBY BASEBALL BASKETBALL HOCKEY NHL NBA NFL
ATHLETICS CYCLING BOXING SKIING RACING MOTOR MOTORCYCLING SWIMMING ROWING SAILING SQUASH BADMINTON HANDBALL
VOLLEYBALL""".split())
DEMONYM = re.compile(r"^[A-Z][a-z]+(?:ian|ean|an|ese|ish|i|ic|ch|ss|ot|ite)s?$")
WORK_WORDS = frozenset("novel film movie album song book play opera series show documentary poem painting".split())
DIGIT = re.compile(r"\d")
LETTER = re.compile(r"[^\W\d_]")


# A headline's sport words, most specific first ("NFL AMERICAN FOOTBALL-COLTS CLOBBER EAGLES").
SPORT_WORDS: Sequence[Tuple[Tuple[str, ...], str]] = [
    (("NFL",), "nfl"), (("NHL",), "nhl"), (("NBA",), "nba"), (("MLB",), "mlb"),
    (("AMERICAN", "FOOTBALL"), "american_football"), (("NCAA",), "american_football"), (("CFL",), "american_football"),
    (("AUSTRALIAN", "RULES"), "australian_football"), (("AFL",), "australian_football"),
    (("ICE", "HOCKEY"), "ice_hockey"), (("FIELD", "HOCKEY"), "field_hockey"), (("HOCKEY",), "ice_hockey"),
    (("BASKETBALL",), "basketball"), (("BASEBALL",), "baseball"), (("CRICKET",), "cricket"), (("RUGBY",), "rugby"),
    (("SOCCER",), "soccer"), (("FOOTBALL",), "soccer"), (("TENNIS",), "tennis"), (("GOLF",), "golf"),
    (("CYCLING",), "cycling"), (("ATHLETICS",), "athletics"), (("MARATHON",), "athletics"), (("SKIING",), "skiing"),
    (("SKI",), "skiing"), (("BIATHLON",), "skiing"), (("MOTOR", "RACING"), "motor_racing"),
    (("FORMULA", "ONE"), "motor_racing"), (("MOTORCYCLING",), "motor_racing"), (("RALLYING",), "motor_racing"),
    (("RALLY",), "motor_racing"), (("HORSE", "RACING"), "horse_racing"), (("SAILING",), "sailing"),
    (("YACHTING",), "sailing"), (("BADMINTON",), "badminton"), (("SQUASH",), "squash"), (("BOXING",), "boxing"),
    (("SWIMMING",), "swimming"), (("ROWING",), "rowing"), (("BOBSLEIGH",), "bobsleigh"), (("SKATING",), "skating"),
    (("VOLLEYBALL",), "volleyball"), (("HANDBALL",), "handball"), (("JUDO",), "judo"), (("WRESTLING",), "wrestling"),
    (("SNOOKER",), "snooker"), (("CHESS",), "chess"), (("TABLE", "TENNIS"), "table_tennis"),
    (("OLYMPICS",), "multi_sport"),
]
TEAM_SPORTS = frozenset({"soccer", "rugby", "cricket", "basketball", "baseball", "american_football", "ice_hockey",
                         "australian_football", "field_hockey", "volleyball", "handball", "nba", "mlb", "nfl", "nhl"})
# A North American league's sport (its clubs are a facet of their own; competitions are the sport's).
LEAGUE_SPORTS: Mapping[str, str] = {"nba": "basketball", "mlb": "baseball", "nfl": "american_football",
                                    "nhl": "ice_hockey"}
# Head words of a sports competition (in a sports document it is one of the document's sport);
# other events by their head word.
COMPETITION_WORDS = frozenset("Cup Cups Championship Championships Open Games Olympics Olympiad Prix Tour Marathon "
                              "Rally Trophy Classic Masters League Series Bowl Derby Tournament Slam Final Finals "
                              "Shield Plate Grand".split())
# Words of a sport's governing bodies ("Albanian Football Association"): in sport, no club.
BODY_WORDS = frozenset("Association Federation Confederation Committee Council Board Commission Union "
                       "Ministry".split())
# A national legislature's words: its committee is a government body ("U.S. Senate Banking Committee").
LEGISLATURE_WORDS = frozenset("Senate Parliament Congress Duma".split())
EVENT_KINDS: Mapping[str, str] = {"War": "war", "Wars": "war", "Rebellion": "war", "Uprising": "war",
                                  "Revolution": "history", "Crisis": "history", "Festival": "festival",
                                  "Carnival": "festival", "Contest": "festival", "Conference": "meeting",
                                  "Summit": "meeting", "Forum": "meeting"}


# A soccer competition's scope by its words, the first found (see ``competition_scope``).
SOCCER_SCOPES: Sequence[Tuple[str, frozenset]] = [
    ("soccer_super_cup", frozenset("Super Supercup Supercopa Supercoppa Shield Supercoupe Recopa".split())),
    ("soccer_continental", frozenset("Champions UEFA Winners Libertadores Intertoto Sudamericana CONMEBOL "
                                     "Europa".split())),
    ("soccer_nations", frozenset("World Nations Asian African Championship Championships Olympic Gold "
                                 "America".split())),
    ("soccer_league", frozenset("League Division Liga Serie Bundesliga Premiership Conference".split())),
    ("soccer_cup", frozenset("Cup Cups Pokal Coupe Coppa Copa Taca Trophy".split())),
]


def competition_scope(name: str) -> Optional[str]:
    """A soccer competition's scope: a national teams' tournament (the World Cup, the Asian
    Cup: groups, hosts), a clubs' continental competition (the UEFA Cup: two-leg ties), a
    league, a domestic cup, or a one-match super cup; None when its words do not tell.  A
    replacement keeps the scope: a tournament with groups is never replaced by a super cup."""
    written = [w.strip("'") for w in name.replace("-", " ").replace("'s", " ").split()]  # "Saturday'sWorld Cup"
    words = set(written) | {w.capitalize() for w in written if w.isupper()}  # "WORLD CUP", "UEFA Cup"
    if "European" in words and "Cup" in words:  # the European Cup of 1996 is the clubs' champions' cup
        return "soccer_continental"
    for scope, heads in SOCCER_SCOPES:
        if not heads.isdisjoint(words):
            return scope
    return None


def headline_sport(words: Sequence[str]) -> Optional[str]:
    """The sport a headline names, upper-cased words split at hyphens ("ALPINE SKIING-WOMEN 'S ...")."""
    upper = [part for w in words for part in w.upper().split("-") if part]
    present = set(upper)
    for key, sport in SPORT_WORDS:
        if key[0] in present and (len(key) == 1 or any(upper[i:i + len(key)] == list(key)
                                                       for i in range(len(upper) - len(key) + 1))):
            return sport
    return None


def sports_sentence(words: Sequence[str]) -> bool:
    """Sports vocabulary, or a results/standings line (half its tokens numbers)."""
    return results_line(words) or not SPORTS.isdisjoint(map(str.lower, words)) or not HEADLINE_SPORTS.isdisjoint(words)


def results_line(words: Sequence[str]) -> bool:
    """A results or standings line: half its tokens (two or more) are numbers."""
    numbers = sum(1 for w in words if w[:1].isdigit() or (w[:1] in "+-" and w[1:2].isdigit()))
    return numbers >= 2 and numbers * 2 >= len(words) - 2


def sentence_sport(words: Sequence[str]) -> Optional[str]:
    """A sentence read alone: the sport it names, ``""`` for sport without a named sport
    (sports vocabulary, a results line), else None."""
    sport = headline_sport(words) if not HEADLINE_SPORTS.isdisjoint(w.upper() for w in words) else None
    return sport or ("" if sports_sentence(words) else None)


def document_sports(tokens: Sequence[Sequence[str]], documents: Sequence[int]) -> Dict[int, Optional[str]]:
    """Per document, the sport its headline (one of its first two sentences) names, else None.
    Only a named sport counts: results, scores and "won" appear in business news too."""
    found: Dict[int, Optional[str]] = {}
    seen: Dict[int, int] = {}
    for s, doc in enumerate(documents):
        seen[doc] = seen.get(doc, 0) + 1
        if seen[doc] <= 2 and found.get(doc) is None:
            found[doc] = headline_sport(tokens[s])
        found.setdefault(doc, None)
    return found


# ---- gender -----------------------------------------------------------------------------------
TITLES: Mapping[str, str] = {
    **dict.fromkeys("Mr Mr. Sir Lord Monsieur Herr Senor Signor King Prince Duke Father Brother Sheikh".split(),
                    "male"),
    **dict.fromkeys("Mrs Mrs. Ms Ms. Miss Madame Mme Mme. Lady Dame Frau Senora Signora Queen Princess Duchess "
                    "Sister Mother".split(), "female")}
WOMEN_WORDS = frozenset("WOMEN WOMEN'S LADIES LADIES' GIRLS".split())
MEN_WORDS = frozenset("MEN MEN'S".split())
MALE_PRONOUNS = frozenset("he him his himself".split())
FEMALE_PRONOUNS = frozenset("she her hers herself".split())
# Women's competitions whose names have no women's word: the tours' and team cups' ones
WOMENS_COMPETITIONS = frozenset({"fed cup", "billie jean king cup", "uber cup", "solheim cup"})
WOMENS_BODIES = frozenset("WTA LPGA WNBA".split())


def womens_competition(name: str) -> bool:
    """A women's competition ("WTA Finals", "Women's Super League", the Fed Cup): a replacement
    keeps it one or not one, so the players the sentence names stay of a gender it can have."""
    words = set(name.upper().replace("-", " ").split())
    return " ".join(name.casefold().split()) in WOMENS_COMPETITIONS or not words.isdisjoint(WOMEN_WORDS | WOMENS_BODIES)


class Genders:
    """The gender a document signals for a person mention: the mention's own given name
    (when every Faker locale agrees on it), a title before it ("Mrs"), the given names of the
    other persons of its sentence when two or more are known and all agree (a draw), the pronouns of its
    sentence and the next when it is the sentence's only person, a women's or men's event in
    the document's headline, else the given names of the document's persons when four in five
    agree; None when nothing says."""

    def __init__(self, given_names: Mapping[str, str], tokens: Sequence[Sequence[str]], documents: Sequence[int],
                 person_spans: Sequence[Sequence[Tuple[int, int]]]):
        self.given = given_names
        self.document: Dict[int, Optional[str]] = {}
        self.pronouns: Dict[int, Optional[str]] = {}  # sentence -> gender of its (and the next's) pronouns
        self.sentence: Dict[int, str] = {}  # sentence -> the one gender of its persons' known given names
        counts: Dict[int, Counter] = {}
        heads: Dict[int, int] = {}
        for s, doc in enumerate(documents):
            heads[doc] = heads.get(doc, 0) + 1
            if heads[doc] <= 2 and self.document.get(doc) is None:
                self.document[doc] = self.headline(tokens[s])
            self.document.setdefault(doc, None)
            if len(person_spans[s]) == 1:
                words = {w.lower() for w in tokens[s]}
                if s + 1 < len(tokens) and documents[s + 1] == doc:
                    words.update(w.lower() for w in tokens[s + 1])
                male, female = not MALE_PRONOUNS.isdisjoint(words), not FEMALE_PRONOUNS.isdisjoint(words)
                if male != female:
                    self.pronouns[s] = "male" if male else "female"
            known = Counter()
            for start, end in person_spans[s]:
                gender = self.of_name(tokens[s][start:end])
                if gender:
                    counts.setdefault(doc, Counter())[gender] += 1
                    known[gender] += 1
            # one draw, one event: "Susi Susanti v Camilla Martin ; Ye Zhaoying v Gong Zichao"
            if len(known) == 1 and sum(known.values()) >= 2:
                self.sentence[s] = next(iter(known))
        for doc, count in counts.items():
            if self.document.get(doc) is None and sum(count.values()) >= 2:
                gender, n = count.most_common(1)[0]
                if n * 5 >= sum(count.values()) * 4:
                    self.document[doc] = gender

    @staticmethod
    def headline(words: Sequence[str]) -> Optional[str]:
        upper = [w.upper() for w in words]
        found = {part for w in upper for part in w.split("-")} | {a + b for a, b in zip(upper, upper[1:])}
        if not WOMEN_WORDS.isdisjoint(found):  # "WOMEN 'S" is two tokens
            return "female"
        if not MEN_WORDS.isdisjoint(found):
            return "male"
        return None

    def of_name(self, words: Sequence[str]) -> Optional[str]:
        """The gender of a full name's given name (the first word; not an initial)."""
        if len(words) < 2 or len(words[0]) < 3 or "." in words[0]:
            return None
        first = words[0] if not words[0].isupper() else words[0].capitalize()
        return self.given.get(first)

    def of_mention(self, words: Sequence[str], start: int, end: int, s: int, doc: int) -> Optional[str]:
        gender = self.of_name(words[start:end])
        if gender is None and start > 0:
            gender = TITLES.get(words[start - 1])
        return gender or self.sentence.get(s) or self.pronouns.get(s) or self.document.get(doc)


def demonym_form(word: str) -> str:
    """``people`` for a noun ("Icelander"), ``adjective`` for an adjective without an -s plural
    whose "the X" names the people ("French", "Swiss", "Chinese"), else ``dual`` (adjective and
    noun, plural with -s: "Italian", "Pakistani", "Czech")."""
    if word.endswith("er"):
        return "people"
    if word.endswith(("ese", "ish", "ch", "ss", "ic", "sy", "be")) and word != "Czech":
        return "adjective"
    return "dual"


# The facet of an original whose class a head word decided, by its head words (the first found);
# a class not listed here has no such facet.
HEAD_FACETS: Mapping[str, Sequence[Tuple[str, frozenset]]] = {
    "government": [("legislature", frozenset("Parliament Senate Assembly Congress Duma Diet Chamber House".split())),
                   ("court", frozenset("Court Tribunal".split())),
                   ("security", frozenset("Police Army Navy Forces Guard Guards Militia".split())),
                   ("ministry", frozenset("Ministry Department Office Treasury".split())),
                   ("council", frozenset("Council Cabinet Politburo".split())),
                   ("agency", frozenset("Commission Agency Bureau Administration Authority Directorate Service "
                                        "Prosecutor Government Committee".split()))],
    "party": [("militant", frozenset("Liberation Army Brigades Tigers Jihad Mujahideen Rebels Guerrillas Militia "
                                     "Resistance".split()))],
}
# The facet of an original of these classes that nothing else tells: most parties are parties,
# most international organisations intergovernmental.
DEFAULT_FACETS: Mapping[str, str] = {"party": "party", "international": "intergovernmental"}

# Words that say a company's industry (the built-in dictionary's industries, make_entities.INDUSTRY_RULES):
# "the nickel , copper ... metals producer", "producing Carlsberg beer", "equities analyst at X".
INDUSTRY_CUES: Mapping[str, str] = {
    **dict.fromkeys("nickel copper cobalt platinum gold silver zinc aluminium aluminum steel metals miner miners "
                    "mining mine mines smelter diamonds".split(), "mining"),
    **dict.fromkeys("beer beers brewer brewers brewery breweries brewing lager soft-drink soft-drinks".split(),
                    "beverage"),
    **dict.fromkeys("airline airlines flights flight aircraft airliner".split(), "airline"),
    **dict.fromkeys("carmaker carmakers automaker automakers car cars vehicle vehicles".split(), "carmaker"),
    **dict.fromkeys("oil crude refinery refineries refiner petrol gasoline tanker".split(), "oil"),
    **dict.fromkeys("insurer insurers insurance reinsurer reinsurance".split(), "insurance"),
    **dict.fromkeys("brokerage broker brokers securities analyst analysts bond bonds equities investment fund funds "
                    "banking underwriter".split(), "finance"),
    **dict.fromkeys("supermarket supermarkets retailer retailers stores store chain grocer".split(), "retail"),
    **dict.fromkeys("drugmaker drugmakers pharmaceutical pharmaceuticals drug drugs".split(), "pharma"),
    **dict.fromkeys("software computer computers chip chips semiconductor semiconductors electronics".split(),
                    "technology"),
    **dict.fromkeys("telecom telecoms telecommunications telephone phone".split(), "telecom"),
    **dict.fromkeys("chemical chemicals".split(), "chemicals"),
    **dict.fromkeys("tobacco cigarette cigarettes".split(), "tobacco"),
    **dict.fromkeys("construction builder contractor engineering".split(), "industrial"),
}


def industry_cue(words: Sequence[str], start: int, end: int) -> Optional[str]:
    """The industry a company mention's own words ("South African Breweries") or else the sentence's
    industry word nearest to it say; None if there is none."""
    found = [(0 if start <= k < end else min(abs(k - start), abs(k - end + 1)), k, INDUSTRY_CUES[w.lower()])
             for k, w in enumerate(words) if w.lower() in INDUSTRY_CUES]
    return min(found)[2] if found else None


LANGUAGE_AFTER = frozenset("language languages -speaking speaking speakers speaker dialect translation "
                           "version".split())
LANGUAGE_BEFORE = frozenset("in into speak speaks spoke speaking".split())


def language_context(words: Sequence[str], start: int, end: int) -> bool:
    """A language is meant: "the Basque language", "in French ." (not "in French football")."""
    after = words[end] if end < len(words) else ""
    if after.lower() in LANGUAGE_AFTER:
        return True
    return start > 0 and words[start - 1].lower() in LANGUAGE_BEFORE and not after[:1].isalnum()


def split_suffix(text: str, known) -> Tuple[str, str]:
    """(stem, suffix): a possessive (``'s``, ``'``, attached or a token of its own) or, when the stem is known
    (``known(stem)``), a plural ``s`` ("Germans" -> "German", "s")."""
    for suffix in ("'s", "\u2019s", "'"):
        if text.endswith(suffix) and len(text) > len(suffix) + 1:
            if text[-len(suffix) - 1] == " ":  # a token of its own ("McDonald 's"): it stays one
                return text[: -len(suffix) - 1], " " + suffix
            return text[: -len(suffix)], suffix
    if text.endswith("s") and not text.endswith("ss") and len(text) > 3 and known(text[:-1]):
        return text[:-1], "s"
    return text, ""


class FineClasses:
    """Decides fine classes for one dictionary (its classes per type, plus aliases)."""

    def __init__(self, classes_by_type: Mapping[str, Sequence[str]], lookup: Mapping[str, Mapping[str, str]],
                 fallback: Mapping[str, str], train=None):
        self.classes = {t: tuple(c) for t, c in classes_by_type.items()}
        self.lookup = lookup  # type -> casefolded string -> class
        self.fallback = fallback
        self.train = train
        self._train_longer: Optional[Dict[str, Dict[str, List[str]]]] = None
        self._train_cache: Dict[Tuple[str, str], Optional[str]] = {}

    def known(self, entity_type: str, text: str) -> bool:
        return text.casefold() in self.lookup.get(entity_type, {})

    def _has(self, entity_type: str, name: Optional[str]) -> Optional[str]:
        return name if name is not None and name in self.classes.get(entity_type, ()) else None

    def by_string(self, entity_type: str, text: str) -> Optional[str]:
        """Head words, a person's token count, demonym and acronym shapes."""
        words = text.split()
        classes = self.classes.get(entity_type, ())
        if "person" in classes and "surname" in classes:
            return "surname" if len(words) == 1 else "person"
        if len(classes) == 1:  # nothing to decide
            return classes[0]
        for name, heads in HEADS:
            if name in classes and any(w in heads for w in words):
                if name == "international" and "government" in classes and not LEGISLATURE_WORDS.isdisjoint(words):
                    return "government"
                return name
        if DIGIT.search(text) and any(DIGIT.search(w) and LETTER.search(w) for w in words):
            return self._has(entity_type, "product")
        if len(words) == 1 and DEMONYM.match(text):
            return self._has(entity_type, "nationality")
        return None

    def by_context(self, entity_type: str, words: Sequence[str], start: int, end: int, sport: Optional[str]
                   ) -> Optional[str]:
        """The next word, a title's cue before it, sport (``sport``: the sport of the sentence's
        document, ``""`` for sport without a named one, None outside sport; see
        ``document_sports`` and ``sentence_sport``)."""
        after = words[end].lower() if end < len(words) else ""
        name = self._has(entity_type, NEXT_WORDS.get(after))
        if name:
            return name
        # a title after "the novel", "his film" (quotes alone mark any phrase: " Euro-sceptic ")
        if not WORK_WORDS.isdisjoint(w.lower() for w in words[max(0, start - 3):start]):
            name = self._has(entity_type, "work")
            if name:
                return name
        if sport is not None:
            if any(w in COMPETITION_WORDS for w in words[start:end]) and self._has(entity_type, "event"):
                return "event"
            # an individual sport's organisations are no clubs, nor a sport's governing bodies, nor
            # "a McDonald 's" (a club's name takes no indefinite article)
            before = words[start - 1].lower() if start else ""
            if (sport == "" or sport in TEAM_SPORTS) and BODY_WORDS.isdisjoint(words[start:end]) and \
                    before not in ("a", "an"):
                return self._has(entity_type, "sports_club")
        return None

    def by_training(self, entity_type: str, text: str) -> Optional[str]:
        """Longer training mentions of the type containing the string decided by their own
        string, then the context rules over the training sentences the string occurs in."""
        if self.train is None:
            return None
        key = (entity_type, text)
        if key in self._train_cache:
            return self._train_cache[key]
        cache = self.train.__dict__.setdefault("_fine_class_votes", {})  # built once per statistics
        signature = (tuple(sorted(self.classes.items())), len(self.lookup.get(entity_type, ())))
        if (signature, key) in cache:
            self._train_cache[key] = cache[(signature, key)]
            return cache[(signature, key)]
        votes: Counter = Counter()
        for longer in self._longer(entity_type).get(text.split()[-1], ()):
            if longer != text and f" {text} " in f" {longer} ":
                name = self.lookup.get(entity_type, {}).get(longer.casefold()) or self.by_string(entity_type, longer)
                if name:
                    votes[name] += 1
        if not votes and (text, entity_type) in self.train.mentions:
            for words, start, end in self._occurrences(text.split(), 20):
                name = self.by_context(entity_type, words, start, end, sentence_sport(words))
                if name:
                    votes[name] += 1
        result = min(votes, key=lambda name: (-votes[name], name)) if votes else None
        self._train_cache[key] = cache[(signature, key)] = result
        return result

    def _longer(self, entity_type: str) -> Dict[str, List[str]]:
        index = self.train.__dict__.get("_longer_mentions")  # kept with the statistics: built once
        if index is None:
            index = {}
            for (text, kind), _ in sorted(self.train.mentions.items()):
                words = text.split()
                if len(words) > 1:
                    for word in set(words):
                        index.setdefault(kind, {}).setdefault(word, []).append(text)
            self.train.__dict__["_longer_mentions"] = index
        return index.get(entity_type, {})

    def _occurrences(self, words: Sequence[str], limit: int):
        import numpy as np

        stats = self.train
        stats.require_text("deciding fine classes from the training sentences a mention occurs in (entity attacks "
                           "with training statistics)")
        order = stats.__dict__.get("_positions_by_id")
        if order is None:
            order = np.argsort(stats.token_ids, kind="stable")
            stats.__dict__["_positions_by_id"] = order
        ids = [stats.token_index.get(w, -1) for w in words]
        if min(ids) < 0:
            return []
        token_ids = stats.token_ids
        found = []
        sorted_ids = stats.__dict__.get("_sorted_ids")
        if sorted_ids is None:
            sorted_ids = token_ids[order]
            stats.__dict__["_sorted_ids"] = sorted_ids
        first, last = np.searchsorted(sorted_ids, ids[0]), np.searchsorted(sorted_ids, ids[0], side="right")
        n = len(token_ids)
        for p in order[first:last].tolist():
            if len(found) >= limit:
                break
            if p + len(ids) <= n and all(token_ids[p + j] == ids[j] for j in range(1, len(ids))):
                s = int(np.searchsorted(stats.sentence_starts, p, side="right")) - 1
                a, b = int(stats.sentence_starts[s]), int(stats.sentence_starts[s + 1])
                if p + len(ids) <= b:
                    sentence = [stats.vocab[i] for i in token_ids[a:b].tolist()]
                    found.append((sentence, p - a, p - a + len(ids)))
        return found

    def decide(self, entity_type: str, text: str, words: Sequence[str], start: int, end: int, sport: Optional[str]
               ) -> Tuple[Optional[str], str]:
        """(class, route) of one original; (None, ``UNCLASSIFIED``) when nothing decides and the
        type has no fallback class (``fallback``)."""
        classes = self.classes.get(entity_type, ())
        if not classes:
            return None, UNCLASSIFIED
        table = self.lookup.get(entity_type, {})
        stem, _ = split_suffix(text, lambda s: s.casefold() in table)
        name = table.get(text.casefold(), table.get(stem.casefold()))
        if name is not None:
            if name == "nationality" and "language" in classes and language_context(words, start, end):
                return "language", "rule"
            return name, "dictionary"
        name = self.by_string(entity_type, stem)
        if name is None:
            name = self.by_context(entity_type, words, start, end, sport)
        if name is not None:
            return name, "rule"
        name = self.by_training(entity_type, text)
        if name is not None:
            return name, "training"
        return self.fallback_class(entity_type)

    def fallback_class(self, entity_type: str) -> Tuple[Optional[str], str]:
        name = self.fallback.get(entity_type)
        if name is None:
            return None, UNCLASSIFIED
        return (name if name in self.classes.get(entity_type, ()) else self.classes[entity_type][0]), "fallback"


def lookup_table(dictionary: Mapping[str, Mapping[str, Sequence[str]]], aliases: Mapping[str, Sequence[str]]
                 ) -> Dict[str, Dict[str, str]]:
    """Per type, each known string (casefolded) to its class: a type's classes in order, the
    first listing a string keeps it; aliases after candidates."""
    table: Dict[str, Dict[str, str]] = {}
    for entity_type, classes in dictionary.items():
        entries = table.setdefault(entity_type, {})
        for source in (classes, {name: aliases.get(name, ()) for name in classes}):
            for name, strings in source.items():
                for string in strings:
                    entries.setdefault(string.casefold(), name)
    return table
