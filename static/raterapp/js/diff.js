// Where two texts differ, character by character: what the judging page marks in a card.
//
// Myers' O(ND) diff on the part between the common prefix and suffix (where a typo lives),
// on characters for short texts and on words for long ones (to keep the work small), then a
// light "semantic" clean-up: a short run of equal characters between two changes is folded
// into the change, so "web shop" against "call centre" reads as one change, not as a
// scatter of matching letters. Texts that have little in common are marked whole.

const CHAR_LIMIT = 1200; // beyond this many characters in the middle part, compare words
const TOKEN_LIMIT = 2400; // beyond this many words, the middle part is marked whole
const MIN_SHARED = 0.34; // below this share of common text, the whole text is marked

/** Diff of two token arrays: a list of [op, tokens] with op "=", "-" (only in a), "+" (only in b). */
function myers(a, b) {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace = [];
  for (let d = 0; d <= max; d += 1) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x += 1;
        y += 1;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, a, b, offset);
    }
  }
  return [];
}

function backtrack(trace, a, b, offset) {
  const ops = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 1; d >= 0; d -= 1) {
    const v = trace[d];
    const k = x - y;
    const prevK = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? k + 1 : k - 1;
    const prevX = v[offset + prevK];
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push(["=", a[x - 1]]);
      x -= 1;
      y -= 1;
    }
    if (d > 0) ops.push(x === prevX ? ["+", b[y - 1]] : ["-", a[x - 1]]);
    x = prevX;
    y = prevY;
  }
  return ops.reverse();
}

/** Runs of one op joined: [[op, text], ...]. */
function runs(ops) {
  const out = [];
  for (const [op, token] of ops) {
    const last = out[out.length - 1];
    if (last && last[0] === op) last[1] += token;
    else out.push([op, token]);
  }
  return out;
}

/** Fold short equalities that sit between changes into the changes around them. */
function cleanup(parts) {
  let changed = true;
  while (changed) {
    changed = false;
    for (let i = 1; i < parts.length - 1; i += 1) {
      const [op, text] = parts[i];
      if (op !== "=" || text.length > 3) continue;
      const before = changeAround(parts, i, -1);
      const after = changeAround(parts, i, 1);
      if (before && after && text.length <= Math.min(before, after)) {
        parts.splice(i, 1, ["-", text], ["+", text]);
        changed = true;
      }
    }
    const merged = mergeChanges(parts);
    changed = changed && merged.length !== parts.length;
    parts.splice(0, parts.length, ...merged);
  }
  return parts;
}

/** The size of the change next to parts[index] (before: step -1, after: +1): its longer side. */
function changeAround(parts, index, step) {
  const length = { "-": 0, "+": 0 };
  for (let j = index + step; j >= 0 && j < parts.length && parts[j][0] !== "="; j += step) length[parts[j][0]] += parts[j][1].length;
  return Math.max(length["-"], length["+"]);
}

/** Consecutive changes as one deletion then one insertion. */
function mergeChanges(parts) {
  const out = [];
  let minus = "";
  let plus = "";
  const flush = () => {
    if (minus) out.push(["-", minus]);
    if (plus) out.push(["+", plus]);
    minus = "";
    plus = "";
  };
  for (const [op, text] of parts) {
    if (op === "-") minus += text;
    else if (op === "+") plus += text;
    else {
      flush();
      const last = out[out.length - 1];
      if (last && last[0] === "=") last[1] += text;
      else out.push(["=", text]);
    }
  }
  flush();
  return out;
}

/** [[op, text], ...] turning `a` into `b`. */
export function diffTexts(a, b) {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let end = 0;
  while (end < a.length - start && end < b.length - start && a[a.length - 1 - end] === b[b.length - 1 - end]) end += 1;
  const midA = a.slice(start, a.length - end);
  const midB = b.slice(start, b.length - end);
  const split = (text) => (midA.length + midB.length > CHAR_LIMIT ? text.match(/\s+|[^\s]+/g) || [] : [...text]);
  const tokensA = split(midA);
  const tokensB = split(midB);
  const parts = [];
  if (start) parts.push(["=", a.slice(0, start)]);
  if (tokensA.length + tokensB.length > TOKEN_LIMIT) parts.push(["-", midA], ["+", midB]);
  else parts.push(...cleanup(runs(myers(tokensA, tokensB))));
  if (end) parts.push(["=", a.slice(a.length - end)]);
  return mergeChanges(parts);
}

/**
 * `text` cut into [{text, differs}] against `other`: the parts of `text` that `other` lacks.
 * Symmetric: both sides are cut from one diff, made in a fixed order of the two texts.
 */
export function differingParts(text, other) {
  if (text === other || !other) return [{ text, differs: false }];
  const mine = text <= other ? "-" : "+";
  const parts = text <= other ? diffTexts(text, other) : diffTexts(other, text);
  const shared = parts.filter(([op]) => op === "=").reduce((sum, [, chunk]) => sum + chunk.length, 0);
  if (shared < MIN_SHARED * Math.max(text.length, other.length)) return [{ text, differs: true }];
  return parts.filter(([op]) => op === "=" || op === mine).map(([op, chunk]) => ({ text: chunk, differs: op === mine }));
}
