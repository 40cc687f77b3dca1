#!/usr/bin/env python3
"""
Writes test/vectors/hashing.json: the expected canonical JSON text and SHA-256
of every hashing vector, computed by THIS independent implementation (Python's
json parser, an RFC 8785 serialiser written here from the RFC's text, hashlib),
never by src/shared/canonical.ts, which the vectors test.

Run:  python3 test/vectors/generate_hashing.py           (rewrites hashing.json)
      python3 test/vectors/generate_hashing.py --check   (exit 1 if hashing.json differs)
Python 3.8+, standard library only.

Independent checks made here before anything is written:
- vectors marked `published` must reproduce text published with RFC 8785
  (sections 3.2.2-3.2.4) or its author's test data (cyberphone/
  json-canonicalization testdata/output); the generator stops if they differ;
- the RFC 8785 Appendix B number table is checked from the IEEE-754 bit
  patterns (struct) through the ECMAScript formatter below.
"""
import hashlib
import json
import math
import struct
import sys
from decimal import Decimal
from pathlib import Path

HERE = Path(__file__).resolve().parent


class Reject(Exception):
    """The input has no RFC 8785 canonical form (I-JSON violation)."""


# ---------------------------------------------------------------- parsing

def _reject_constant(name):
    raise Reject(f"non-finite number {name}")


def _pairs(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise Reject("duplicate key")  # I-JSON (RFC 7493) section 2.3
    return dict(pairs)


def parse(text):
    # Every JSON number is an IEEE-754 double (RFC 8785 section 3.2.2.3), so
    # integers go through float() too: "9007199254740993" becomes 2**53, and
    # "-0" becomes -0.0, exactly as ECMAScript JSON.parse reads them.
    return json.loads(text, parse_float=float, parse_int=float,
                      parse_constant=_reject_constant, object_pairs_hook=_pairs)


# ---------------------------------------------------------------- serialising

def es_number(x):
    """ECMAScript Number::toString (ECMA-262 6.1.6.1.20), as RFC 8785 3.2.2.3 requires.

    repr() gives the shortest digit string that round-trips and, among those,
    the nearest to the value (David Gay's algorithm), which is the digit choice
    ECMA-262 prescribes; the layout rules are then applied by hand.
    """
    if math.isnan(x) or math.isinf(x):
        raise Reject("non-finite number")
    if x == 0:
        return "0"  # also -0
    sign = "-" if x < 0 else ""
    d = Decimal(repr(abs(x))).normalize()
    _, digit_tuple, exp = d.as_tuple()
    digits = "".join(map(str, digit_tuple))
    k = len(digits)
    n = exp + k  # value = 0.d1..dk * 10^n
    if k <= n <= 21:
        s = digits + "0" * (n - k)
    elif 0 < n <= 21:
        s = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        s = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mant = digits if k == 1 else digits[0] + "." + digits[1:]
        s = mant + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return sign + s


_SHORT = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\"}


def es_string(s):
    """RFC 8785 3.2.2.2: minimal escaping; everything else (U+007F, U+2028, astral) as is."""
    out = ['"']
    for ch in s:
        c = ord(ch)
        if 0xD800 <= c <= 0xDFFF:
            raise Reject("lone surrogate")  # not valid Unicode: I-JSON 2.1
        if c in _SHORT:
            out.append(_SHORT[c])
        elif c < 0x20:
            out.append("\\u%04x" % c)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def utf16_key(k):
    # RFC 8785 3.2.3: sort by UTF-16 code units; big-endian UTF-16 bytes compare the same way.
    return k.encode("utf-16-be")


def canonical(v):
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, float):
        return es_number(v)
    if isinstance(v, str):
        return es_string(v)
    if isinstance(v, list):
        return "[" + ",".join(canonical(x) for x in v) + "]"
    if isinstance(v, dict):
        for k in v:
            es_string(k)  # rejects lone surrogates in keys before sorting
        return "{" + ",".join(es_string(k) + ":" + canonical(v[k]) for k in sorted(v, key=utf16_key)) + "}"
    raise Reject(f"unsupported {type(v)}")


def descriptor_input(d):
    """The object a descriptorHash covers (docs/design.md, "Trust rules"; docs/browser-facts.md,
    "WebMCP: listing tools", on what getTools() reports), normalised: title/description missing or null ->
    "", inputSchema missing or null -> {}, a string inputSchema parsed as JSON
    (kept as the string if it does not parse), annotations missing or null -> {},
    every other field dropped."""
    schema = d.get("inputSchema")
    if schema is None:
        schema = {}
    elif isinstance(schema, str):
        try:
            schema = parse(schema)
        except (ValueError, Reject):
            pass
    return {
        "name": d["name"],
        "title": "" if d.get("title") is None else d["title"],
        "description": "" if d.get("description") is None else d["description"],
        "inputSchema": schema,
        "origin": d["origin"],
        "annotations": {} if d.get("annotations") is None else d["annotations"],
    }


# ---------------------------------------------------------------- the vectors

RFC_322 = r'''{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}'''
RFC_322_OUT = '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'

# RFC 8785 section 3.2.4: the UTF-8 bytes of RFC_322_OUT, as printed in the RFC.
RFC_324_HEX = """
7b 22 6c 69 74 65 72 61 6c 73 22 3a 5b 6e 75 6c 6c 2c 74 72 75 65 2c 66 61 6c 73 65 5d 2c
22 6e 75 6d 62 65 72 73 22 3a 5b 33 33 33 33 33 33 33 33 33 2e 33 33 33 33 33 33 33 2c 31
65 2b 33 30 2c 34 2e 35 2c 30 2e 30 30 32 2c 31 65 2d 32 37 5d 2c 22 73 74 72 69 6e 67 22
3a 22 e2 82 ac 24 5c 75 30 30 30 66 5c 6e 41 27 42 5c 22 5c 5c 5c 5c 5c 22 2f 22 7d"""
assert RFC_322_OUT.encode("utf-8") == bytes.fromhex("".join(RFC_324_HEX.split())), "RFC 8785 3.2.4 bytes"

RFC_323 = r'''{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}'''
RFC_323_OUT = ('{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",'
               '"\u20ac":"Euro Sign","\U0001F600":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}')

WEIRD = r'''{"\u20ac":"Euro Sign","1":"One","\u0080":"Control\u007f","\ud83d\ude02":"Smiley",
"\u00f6":"Latin Small Letter O With Diaeresis","\ufb33":"Hebrew Letter Dalet With Dagesh","</script>":"Browser Challenge"}'''
WEIRD_OUT = ('{"1":"One","</script>":"Browser Challenge","\u0080":"Control\u007f","\u00f6":"Latin Small Letter O With Diaeresis",'
             '"\u20ac":"Euro Sign","\U0001F602":"Smiley","\ufb33":"Hebrew Letter Dalet With Dagesh"}')

# RFC 8785 Appendix B: IEEE-754 bit pattern -> expected ECMAScript text.
APPENDIX_B = [
    ("0000000000000000", "0"), ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"), ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"), ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"), ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"), ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"), ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"), ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"), ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"), ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"), ("43143ff3c1cb0959", "1424953923781206.2"),
]


def bits_to_float(h):
    return struct.unpack(">d", bytes.fromhex(h))[0]


for h, want in APPENDIX_B:
    got = es_number(bits_to_float(h))
    assert got == want, f"Appendix B {h}: {got} != {want}"

# The Appendix B inputs written as JSON text: repr() round-trips, so these
# decimal strings parse back to exactly the listed bit patterns (checked).
APPENDIX_B_JSON = "[" + ",".join(repr(bits_to_float(h)) for h, _ in APPENDIX_B) + "]"
assert [struct.pack(">d", x).hex() for x in parse(APPENDIX_B_JSON)] == [h for h, _ in APPENDIX_B]
APPENDIX_B_OUT = "[" + ",".join(w for _, w in APPENDIX_B) + "]"

CONTROLS = "".join("\\u%04x" % c for c in range(0x20))

# name, kind, inputJson, published expected canonical text (or None), note
VECTORS = [
    # --- RFC 8785 and its author's test data
    ("rfc8785-3.2.2-example", "canonical", RFC_322, RFC_322_OUT, "RFC 8785 section 3.2.2 input and output"),
    ("rfc8785-3.2.3-sorting", "canonical", RFC_323, RFC_323_OUT, "RFC 8785 section 3.2.3 property sorting example"),
    ("jcs-testdata-weird", "canonical", WEIRD, WEIRD_OUT, "cyberphone/json-canonicalization testdata weird.json (U+007F kept raw)"),
    ("rfc8785-appendix-b-numbers", "canonical", APPENDIX_B_JSON, APPENDIX_B_OUT, "RFC 8785 Appendix B, from the IEEE-754 bit patterns"),
    ("jcs-testdata-unnormalized", "canonical", '{"Unnormalized Unicode":"\\u1e0d\\u0307"}', None, "no Unicode normalisation"),
    # --- Unicode
    ("nfc-e-acute", "canonical", '{"name":"caf\\u00e9"}', None, "NFC: U+00E9"),
    ("nfd-e-combining-acute", "canonical", '{"name":"cafe\\u0301"}', None, "NFD: e + U+0301; must hash differently from nfc-e-acute"),
    ("astral-emoji-and-g-clef", "canonical", '["\\ud83d\\ude00","\\ud834\\udd1e","\U0001D11E","\u00e9\u4e2d\u6587"]', None, "astral characters escaped or raw in the input give the same raw UTF-8 output"),
    ("utf16-not-codepoint-order", "canonical", '{"\\uff61":"halfwidth ideographic full stop","\\ud83d\\ude00":"grinning face"}', None, "U+1F600 (D83D DE00) sorts before U+FF61 by UTF-16 units, after it by code points"),
    ("integer-like-keys", "canonical", '{"b":1,"10":2,"9":3,"1":4,"a":5,"-1":6}', None, "JS orders integer keys first; JCS sorts them as strings"),
    ("proto-and-constructor-keys", "canonical", '{"constructor":{"prototype":{"polluted":true}},"__proto__":{"polluted":true},"toString":"x","a":1}', None, "__proto__ and constructor are ordinary data keys"),
    # --- escapes
    ("control-characters", "canonical", '"' + CONTROLS + '"', None, "U+0000..U+001F: \\b \\t \\n \\f \\r short forms, others \\u00xx lowercase"),
    ("quotes-backslash-slash", "canonical", r'["\"","\\","\/","/","\\u0041"]', None, "slash is never escaped; backslash and quote are"),
    ("line-separators-and-del", "canonical", '"a\\u2028b\\u2029c\\u007fd\\u0080e"', None, "U+2028, U+2029, U+007F, U+0080 are written raw"),
    ("escaped-ascii-letters", "canonical", '"\\u0048\\u0065llo\\t"', None, "needless escapes in the input disappear"),
    # --- numbers
    ("number-1e21", "canonical", "[1e21,1e20,100000000000000000000,1E+21]", None, "exponent form starts at 1e21"),
    ("number-small", "canonical", "[1e-7,1e-6,0.000001,0.0000001,1.5e-7]", None, "exponent form below 1e-6"),
    ("number-minus-zero", "canonical", "[-0,-0.0,0,0.0,-0e10]", None, "minus zero is written 0"),
    ("number-0.1-plus-0.2", "canonical", "[0.30000000000000004,0.1,0.2,0.3]", None, "0.1+0.2 as the double JS computes"),
    ("number-2^53+1", "canonical", "[9007199254740993,9007199254740992,-9007199254740993,9007199254740995]", None, "integers beyond 2^53 round to the nearest double, ties to even"),
    ("number-extremes", "canonical", "[1e308,5e-324,1.7976931348623157e308,2.2250738585072014e-308,-1e308]", None, "largest, smallest subnormal, smallest normal"),
    ("number-integers", "canonical", "[0,1,-1,42,-42,123456789,1000000,4.50,2e-3,10.0,1E2]", None, "integers and trailing zeros"),
    ("number-negative-fractions", "canonical", "[-1.5,-0.001,-123.456,-1e-10,-3.14159]", None, "negative numbers"),
    # --- containers and primitives
    ("empty-object", "canonical", "{}", None, ""),
    ("empty-array", "canonical", "[]", None, ""),
    ("nested-empty-containers", "canonical", '{"b":[[],{},[{}]],"a":{"z":{},"y":[]},"c":[[[]]]}', None, "nested and empty containers"),
    ("whitespace-dropped", "canonical", '  {\n\t"b" : [ 1 , 2 ] ,\r\n "a" : { } }  ', None, "insignificant white space removed"),
    ("top-level-string", "canonical", '"top"', None, ""),
    ("top-level-literals", "canonical", "[true,false,null,\"\"]", None, "literals and the empty string"),
    ("top-level-number", "canonical", "-2.5e-3", None, "a bare number"),
    # --- descriptors (descriptorHash)
    ("descriptor-imperative-full", "descriptor",
     '{"name":"add","title":"Add numbers","description":"Adds a and b","inputSchema":{"type":"object","properties":{"b":{"type":"number"},"a":{"type":"number"}},"required":["a","b"]},"origin":"http://127.0.0.1:8765","annotations":{"readOnlyHint":true,"untrustedContentHint":false,"consequentialHint":false,"debugging":false}}',
     None, "an imperative tool as getTools() reports it"),
    ("descriptor-missing-title-schema", "descriptor",
     '{"name":"ping","description":"Ping","origin":"https://example.com","annotations":{"readOnlyHint":false,"untrustedContentHint":false,"consequentialHint":false,"debugging":false}}',
     None, "missing title becomes \"\", missing inputSchema {}"),
    ("descriptor-null-fields", "descriptor",
     '{"name":"ping","title":null,"description":null,"inputSchema":null,"origin":"https://example.com","annotations":null}',
     None, "null title/description become \"\", null schema/annotations {}"),
    ("descriptor-declarative-no-annotations", "descriptor",
     '{"name":"order","title":"","description":"Order pizza","inputSchema":{"type":"object","properties":{"size":{"type":"string","enum":["s","m"],"anyOf":[{"const":"s"},{"const":"m"}]},"qty":{"type":"number","minimum":1,"maximum":9,"multipleOf":1},"extra":{"type":"boolean","description":"K\u00e4se \U0001F355"}},"required":["size"]},"origin":"http://localhost:3000"}',
     None, "declarative form tool: no annotations property at all becomes {}"),
    ("descriptor-extra-fields-ignored", "descriptor",
     '{"name":"add","title":"Add","description":"Adds","inputSchema":{},"origin":"http://127.0.0.1:8765","annotations":{},"window":{"length":0},"execute":"function","destructiveHint":true,"zzz":1}',
     None, "window, execute and other fields are not hashed (the test also adds an execute function)"),
    ("descriptor-schema-as-string", "descriptor",
     '{"name":"add","title":"Add","description":"Adds","inputSchema":"{\\"type\\":\\"object\\",\\"properties\\":{}}","origin":"http://a.test","annotations":{}}',
     None, "older builds report inputSchema as a JSON string: parsed"),
    ("descriptor-schema-bad-string", "descriptor",
     '{"name":"add","title":"Add","description":"Adds","inputSchema":"{not json","origin":"http://a.test","annotations":{}}',
     None, "an unparseable string schema is hashed as that string"),
    ("descriptor-unicode-title", "descriptor",
     '{"name":"suche","title":"S\u00fc\u00dfe \u00c4pfel \\ud83c\\udf4e","description":"Line1\\nLine2\\u2028\\"q\\"","inputSchema":{"$ref":"#/defs/x","type":"object"},"origin":"https://xn--mnchen-3ya.de","annotations":{"readOnlyHint":true,"untrustedContentHint":true,"consequentialHint":false,"debugging":false}}',
     None, "non-ASCII title, escapes in description, $ref schema"),
    # --- arguments (argumentsHash)
    ("arguments-add", "arguments", '{"a":40,"b":2}', None, "the executeTool example of docs/browser-facts.md"),
    ("arguments-empty", "arguments", "{}", None, ""),
    ("arguments-form-strings", "arguments", '{"qty":"2","agree":"on","size":"m"}', None, "form values arrive as strings"),
    ("arguments-numbers", "arguments", '{"n":[-0,1e21,0.1,9007199254740993],"x":1.0}', None, "argument numbers are canonicalised"),
    ("arguments-proto-key", "arguments", '{"__proto__":{"isAdmin":true},"q":"x"}', None, "__proto__ in arguments is data"),
    ("arguments-nested-unicode", "arguments", '{"text":"\U0001D11E \\ud83d\\ude00 e\\u0301","list":[{"z":1,"a":[null,true]}],"\\u00e9":"key"}', None, "nested, astral, combining"),
]

# Inputs that have no canonical form: canonicalJson must throw CanonicalizationError.
REJECTS = [
    ("lone-high-surrogate", '"\\ud800"', "lone surrogate (RFC 8785 3.2.2.2 / I-JSON 2.1)"),
    ("lone-low-surrogate", '["a\\udc00b"]', "lone surrogate"),
    ("reversed-surrogate-pair", '"\\ude00\\ud83d"', "low before high: two lone surrogates"),
    ("lone-surrogate-in-key", '{"\\ud800":1}', "lone surrogate in a key"),
]


def main():
    out = []
    for name, kind, text, published, note in VECTORS:
        value = parse(text)
        hashed = descriptor_input(value) if kind == "descriptor" else value
        c = canonical(hashed)
        if published is not None and c != published:
            raise SystemExit(f"{name}: computed {c!r} but the published text is {published!r}")
        out.append({
            "name": name,
            "kind": kind,
            "note": note,
            "inputJson": text,
            "canonical": c,
            "sha256": hashlib.sha256(c.encode("utf-8")).hexdigest(),
        })
    rejects = []
    for name, text, note in REJECTS:
        try:
            canonical(parse(text))
        except Reject:
            rejects.append({"name": name, "inputJson": text, "note": note})
            continue
        raise SystemExit(f"{name}: expected a rejection")
    names = [v["name"] for v in out] + [r["name"] for r in rejects]
    assert len(set(names)) == len(names), "duplicate vector names"
    doc = {
        "source": (
            "Generated by test/vectors/generate_hashing.py, independently of src/shared/canonical.ts: "
            "Python json parsing (every number read as an IEEE-754 double), an RFC 8785 serialiser written "
            "from the RFC text (UTF-16 key order via UTF-16BE bytes, ECMAScript Number::toString layout over "
            "Python's shortest round-trip repr, minimal string escaping), descriptor normalisation from "
            "docs/design.md and docs/browser-facts.md, and hashlib SHA-256 over the UTF-8 bytes. Vectors rfc8785-3.2.2-example, "
            "rfc8785-3.2.3-sorting and rfc8785-appendix-b-numbers reproduce text published in RFC 8785; "
            "jcs-testdata-weird reproduces the RFC author's test data (cyberphone/json-canonicalization); "
            "the generator refuses to write if they differ."
        ),
        "format": (
            "vectors[]: {name, kind: canonical|descriptor|arguments, note, inputJson: raw JSON text to JSON.parse "
            "(keeps -0, 1e21, __proto__ and escapes exact), canonical: expected RFC 8785 text of the value "
            "(for descriptor: of the normalised descriptor), sha256: lowercase hex SHA-256 of its UTF-8 bytes}. "
            "rejects[]: {name, inputJson, note}: canonicalization must throw."
        ),
        "vectors": out,
        "rejects": rejects,
    }
    path = HERE / "hashing.json"
    text = json.dumps(doc, ensure_ascii=True, indent=2) + "\n"
    if "--check" in sys.argv:
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            raise SystemExit(f"{path} is not what this generator writes: run it without --check")
        print(f"{path.name} matches the generator ({len(out)} vectors, {len(rejects)} rejects)")
        return
    path.write_text(text, encoding="utf-8")
    print(f"wrote {len(out)} vectors and {len(rejects)} rejects to {path}")


if __name__ == "__main__":
    main()
