"""chapters/exercises.toml, the course's one table of exercises: each exercise's title, kind,
points and estimated minutes, and for an autograded one how its points are split over its
tests. Grading (book.homework.grade), validate and the pages (the head of each exercise in a
chapter's README, the instructors' table) all read it through this module.

An autograded exercise's points are split over the tests that grade it (hidden ones too when
they are there) in proportion to `weights` (test name -> weight; a test not named weighs 1):
the exercise is worth its points whatever number of tests it has. Its questions that no test
can grade (a derivation, a "why") are worth `hand_points`, graded by hand with the rubric of
its worked solution, like a hand-graded exercise's `points`. A student's own `grade`,
without the hidden tests, splits them over the public tests alone.

The student copy holds the file without the weights that name hidden tests (their names are
the instructor's); the full file goes with the hidden tests (HIDDEN_EXERCISES_FILE), where
`grade --instructor` and the autograder read it."""
import os
import re

from book.homework import UsageError

EXERCISES_FILE = "chapters/exercises.toml"
# The full file beside the hidden tests (in the autograder bundle's hidden-tests/ too).
HIDDEN_EXERCISES_FILE = "chapters/hidden/exercises.toml"
KINDS = ("derive", "explore", "implement", "diagnose")
EXERCISE_ID = re.compile(r"\d\d\.\d+")


def _toml():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10 (Ubuntu 22.04, Gradescope's default image)
        import tomli as tomllib
    return tomllib


def claim_of(test_name):
    """A ctest name without its binary's prefix ("03:", "03: ", "03-hidden:"): its claim."""
    return re.sub(r"^[\w-]+:\s?", "", test_name)


def kinds_of(kind):
    """["implement", "derive"] of "implement, derive"; ValueError when a part is not a kind."""
    parts = [k.strip() for k in kind.split(",")] if isinstance(kind, str) else [kind]
    if not 1 <= len(parts) <= 2 or any(p not in KINDS for p in parts):
        raise ValueError(f"kind = {kind!r}: one or two of {', '.join(KINDS)} "
                         "(\"implement, derive\")")
    return parts


def exercises_path(root):
    """The file grading reads in `root`: the full one when the hidden tests are there."""
    full = os.path.join(root, HIDDEN_EXERCISES_FILE)
    return full if os.path.isfile(full) else os.path.join(root, EXERCISES_FILE)


def load_exercises(root, path=None):
    """{id: {id, title, kind, points, minutes, weights}} from chapters/exercises.toml, in id
    order. Every error in the file is one line of the UsageError it raises."""
    path = path or exercises_path(root)
    rel = os.path.relpath(path, root)
    if not os.path.isfile(path):
        raise UsageError(f"{rel}: missing (the exercises' kinds, points and minutes)")
    tomllib = _toml()
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise UsageError(f"{rel}: not readable TOML ({e})")
    chapters = {d[:2] for d in os.listdir(os.path.join(root, "chapters"))
                if re.match(r"\d\d-", d)} if os.path.isdir(os.path.join(root, "chapters")) else set()
    errors, table = [], {}
    for i, e in sorted(data.items()):
        where = f"{rel}: [\"{i}\"]"
        if not EXERCISE_ID.fullmatch(i) or i[:2] not in chapters or not isinstance(e, dict):
            errors.append(f"{where}: unknown exercise (ids are NN.M of a chapter chapters/NN-*)")
            continue
        unknown = set(e) - {"title", "kind", "points", "minutes", "weights", "hand_points"}
        if unknown:
            errors.append(f"{where}: unknown key {sorted(unknown)[0]!r} (keys: title, kind, "
                          "points, minutes, weights, hand_points)")
        if "hand_points" in e and not (_number(e["hand_points"]) and
                                       0 < e["hand_points"] <= 1000):
            errors.append(f"{where}: hand_points = {e['hand_points']!r}; it takes points > 0 "
                          "(at most 1000)")
        for key, ok, what in [("title", lambda v: isinstance(v, str) and v.strip()
                               and "*" not in v, "a title (text, no *)"),
                              ("points", lambda v: _number(v) and 0 < v <= 1000,
                               "points > 0 (at most 1000)"),
                              ("minutes", lambda v: _number(v) and 0 < v <= 6000,
                               "minutes > 0")]:
            if not ok(e.get(key)):
                errors.append(f"{where}: {key} = {e.get(key)!r}; it takes {what}")
        try:
            kinds_of(e.get("kind"))
        except ValueError as err:
            errors.append(f"{where}: {err}")
        weights = e.get("weights", {})
        if not isinstance(weights, dict):
            errors.append(f"{where}: weights is a table (test name = weight)")
            weights = {}
        for name, w in weights.items():
            if not _number(w) or not 0 <= w <= 1000:
                errors.append(f"{where}.weights: {name!r} = {w!r}; a weight is a number >= 0 "
                              "(0: the test does not count)")
        table[i] = dict(e, id=i, weights=weights)
    if errors:
        raise UsageError("\n".join(errors))
    return dict(sorted(table.items(), key=lambda kv: (kv[0][:2], int(kv[0][3:]))))


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def weight_errors(table, tests_of):
    """One line per weight that names no test of its exercise; tests_of(id) -> test names."""
    errors = []
    for i, e in table.items():
        claims = {claim_of(n) for n in tests_of(i)}
        errors += [f"{EXERCISES_FILE}: [\"{i}\"].weights: {name!r} is not a test of exercise {i}"
                   for name in e["weights"] if claim_of(name) not in claims]
    return errors


def test_points(exercise, names):
    """{test name: points} of an autograded exercise's tests `names`: its points split in
    proportion to the weights, in hundredths that add up to the exercise's points exactly
    (largest remainders), so that every format's per-test scores sum to its total."""
    by_claim = {claim_of(k): w for k, w in exercise["weights"].items()}
    weights = {n: by_claim.get(claim_of(n), 1) for n in names}
    total = sum(weights.values()) or 1  # (every test weighed 0: none counts)
    cents = round(exercise["points"] * 100)
    exact = {n: cents * w / total for n, w in weights.items()}
    share = {n: int(x) for n, x in exact.items()}
    for n in sorted(exact, key=lambda n: share[n] - exact[n])[:cents - sum(share.values())]:
        share[n] += 1
    return {n: c / 100 for n, c in share.items()}


def kind_text(kind):
    """How a page writes a kind: "implement, derive" -> "implement and derive"."""
    return " and ".join(kinds_of(kind))


def head_text(e):
    """The head of an exercise's item on its chapter's page, after its bold id and title. An
    autograded exercise with questions graded by hand (hand_points) shows both parts."""
    points = f"{e['points']:g} point{'' if e['points'] == 1 else 's'}"
    if "hand_points" in e:
        points = f"{e['points']:g} points by its tests + {e['hand_points']:g} by hand"
    return f"({kind_text(e['kind'])} · {points} · about {e['minutes']:g} min)"


WEIGHT_LINE = re.compile(r'^\s*"((?:[^"\\]|\\.)*)"\s*=')


def without_hidden_weights(text, hidden_names):
    """The file's text without the weight lines that name hidden tests (the student copy's)."""
    hidden = set(hidden_names)
    return "".join(line for line in text.splitlines(True)
                   if not ((m := WEIGHT_LINE.match(line)) and claim_of(m.group(1)) in hidden))
