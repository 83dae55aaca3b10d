// Reading a pasted log of failed attempts. Pure and local: the text never
// leaves the browser, and nothing here touches the network or the URL.

// An ISO 8601 date-time: 2026-03-04T10:00:01.250Z, with a space instead of
// the T, a comma or dot before the fraction, and Z, ±hh:mm, ±hhmm or no zone.
const ISO = /(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?(?:\s?(Z|[+-]\d{2}(?::?\d{2})?))?(?![\d])/i;
// Milliseconds since the epoch: 13 digits (2001 through 2286), optionally with
// a fraction, not part of a longer number.
const EPOCH_MS = /(?<![\d.])(\d{13})(?:\.(\d{1,6}))?(?![\d])/;

// parseTimestamp finds the first timestamp in a line and returns it in
// thousandths of a millisecond since the epoch (an integer, exact for any
// date a log can hold), with the text it matched. It returns null when the
// line holds none. A time with no zone is read as UTC and flagged.
export function parseTimestamp(line) {
  const m = ISO.exec(line);
  if (m) {
    const [text, y, mo, d, h, mi, s, frac = "", zone] = m;
    const month = Number(mo), day = Number(d), hour = Number(h), minute = Number(mi), second = Number(s);
    if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return null;
    let ms = Date.UTC(Number(y), month - 1, day, hour, minute, second);
    if (zone && zone.toUpperCase() !== "Z") {
      const sign = zone[0] === "-" ? -1 : 1;
      const digits = zone.slice(1).replace(":", "");
      const off = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || "0");
      ms -= sign * off * 60_000;
    }
    const micro = Number((frac + "000000").slice(0, 6)); // first six digits: down to 0.001 ms
    return { micro: ms * 1000 + micro, text, zoneless: !zone };
  }
  const e = EPOCH_MS.exec(line);
  if (e) {
    const frac = Number(((e[2] || "") + "000").slice(0, 3));
    return { micro: Number(e[1]) * 1000 + frac, text: e[0], zoneless: false };
  }
  return null;
}

// parseLog reads every non-blank line. It returns the timestamps found, in
// the order given, and the lines it skipped (1-based numbers).
export function parseLog(text) {
  const stamps = [], skipped = [];
  let zoneless = false;
  const lines = String(text).split(/\r?\n/);
  lines.forEach((raw, idx) => {
    const line = raw.trim();
    if (line === "") return;
    const ts = parseTimestamp(line);
    if (!ts) { skipped.push({ line: idx + 1, text: line }); return; }
    if (ts.zoneless) zoneless = true;
    stamps.push({ line: idx + 1, text: line, stamp: ts.text, micro: ts.micro });
  });
  return { stamps, skipped, zoneless };
}

// observedWaits turns consecutive failure times into waits: wait k is the time
// between failure k and failure k+1, so it is the wait before retry k plus the
// time retry k itself ran before failing. Times in thousandths of a ms.
export function observedWaits(stamps) {
  const out = [];
  for (let k = 1; k < stamps.length; k++) {
    out.push({ retry: k, from: stamps[k - 1], to: stamps[k], micro: stamps[k].micro - stamps[k - 1].micro });
  }
  return out;
}

// compareWait classifies an observed wait against an expected range [lo, hi]
// in thousandths of a millisecond: "inside", "early" or "late", with by how
// much.
export function compareWait(micro, lo, hi) {
  if (micro < 0) return { verdict: "order", by: -micro };
  if (micro < lo) return { verdict: "early", by: lo - micro };
  if (micro > hi) return { verdict: "late", by: micro - hi };
  return { verdict: "inside", by: 0 };
}

// readableTime prints a timestamp in thousandths of a millisecond for people:
// "2026-03-04 10:00:01.250 UTC", with the sub-millisecond digits when the
// log had them. An epoch number or a time with an offset reads the same way.
export function readableTime(micro) {
  const msPart = Math.floor(micro / 1000);
  const d = new Date(msPart);
  if (Number.isNaN(d.getTime())) return String(micro);
  const p = (n, w = 2) => String(n).padStart(w, "0");
  const sub = micro % 1000;
  const frac = p(d.getUTCMilliseconds(), 3) + (sub ? p(sub, 3).replace(/0+$/, "") : "");
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}.${frac} UTC`;
}
