"""ratchet/_types.py is what tools/generate.py makes of openapi.json."""

from __future__ import annotations

import copy
import importlib.util
import json
import typing
import unittest

from .support import ROOT, SDK

import ratchet
from ratchet import _types

spec = importlib.util.spec_from_file_location("ratchet_generate", SDK / "tools" / "generate.py")
assert spec and spec.loader
generate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(generate)


class Generated(unittest.TestCase):
    def test_checked_in_types_are_fresh(self) -> None:
        fresh = generate.render(ROOT / "openapi.json")
        current = (SDK / "ratchet" / "_types.py").read_text(encoding="utf-8")
        self.assertTrue(
            fresh == current,
            "sdk/python/ratchet/_types.py is stale: openapi.json changed; run scripts/generate (or go generate ./...) from the repository root and commit the result",
        )

    def test_a_changed_document_changes_the_output(self) -> None:
        doc = json.loads((ROOT / "openapi.json").read_text(encoding="utf-8"))
        base = generate.Generator(copy.deepcopy(doc)).render()
        doc["components"]["schemas"]["Job"]["properties"]["priority"] = {"type": ["integer", "null"]}
        changed = generate.Generator(doc).render()
        self.assertNotEqual(base, changed)
        self.assertIn("    priority: NotRequired[int | None]\n", changed)

    def test_every_schema_is_a_typed_dict(self) -> None:
        doc = json.loads((ROOT / "openapi.json").read_text(encoding="utf-8"))
        for name, schema in doc["components"]["schemas"].items():
            with self.subTest(schema=name):
                td = getattr(_types, name)
                self.assertTrue(typing.is_typeddict(td))
                self.assertIs(getattr(ratchet, name), td)
                required = set(schema.get("required", []))
                self.assertEqual(set(td.__required_keys__), required)
                self.assertEqual(set(td.__optional_keys__), set(schema.get("properties", {})) - required)

    def test_shapes(self) -> None:
        hints = typing.get_type_hints(_types.Job)
        self.assertEqual(hints["state"], _types.JobState)
        doc = json.loads((ROOT / "openapi.json").read_text(encoding="utf-8"))
        self.assertEqual(typing.get_args(_types.JobState), tuple(doc["components"]["schemas"]["Job"]["properties"]["state"]["enum"]))
        self.assertEqual(hints["heldBy"], _types.Hold | None)
        self.assertEqual(hints["idempotencyKey"], str | None)
        self.assertEqual(hints["attempts"], list[_types.Attempt])
        self.assertEqual(typing.get_type_hints(_types.Report, include_extras=True)["retryAfterMs"], typing.NotRequired[int | None])
        self.assertEqual(typing.get_type_hints(_types.Run)["counts"], dict[_types.JobState, int])
        self.assertEqual(typing.get_type_hints(_types.Tool)["retryPreset"], _types.RetryPreset | None)
        self.assertIn("from", _types.SimulateConfig.__optional_keys__)

    def test_check_mode(self) -> None:
        self.assertEqual(generate.main(["--check"]), 0)


if __name__ == "__main__":
    unittest.main()
