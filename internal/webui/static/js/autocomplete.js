// Completion for the query boxes: a list under the text being typed,
// from a provider that knows the language (promql.js, logql.js). Arrow
// keys move, Enter or Tab accept, Escape closes.
import { h } from "./dom.js";

// attachCompletion wires ta (a textarea) to provider(text, caret), which
// resolves to {from, to, items: [{label, insert, detail}]} or null: the
// text between from and to is replaced by the item's insert (its label
// by default).
export function attachCompletion(ta, provider) {
  const box = h("div.complete", { role: "listbox", hidden: true });
  ta.parentElement.append(box);
  let state = null; // {from, to, items, at}
  let seq = 0;

  const close = () => {
    box.hidden = true;
    state = null;
  };
  const pick = (i) => {
    if (!state) return;
    const it = state.items[i];
    const ins = it.insert ?? it.label;
    const v = ta.value;
    ta.value = v.slice(0, state.from) + ins + v.slice(state.to);
    const caret = state.from + (it.caret ?? ins.length);
    ta.setSelectionRange(caret, caret);
    close();
    ta.focus();
    ta.dispatchEvent(new Event("input", { bubbles: true }));
  };
  const draw = () => {
    box.replaceChildren(...state.items.map((it, i) => h("div", {
      class: i === state.at ? "on" : "", role: "option",
      onmousedown: (e) => { e.preventDefault(); pick(i); },
    }, h("span", null, highlight(it.label, state.prefix)), it.detail ? h("small", null, it.detail) : null)));
    const on = box.children[state.at];
    if (on) on.scrollIntoView({ block: "nearest" });
  };
  const update = async () => {
    const mine = ++seq;
    let res = null;
    try {
      res = await provider(ta.value, ta.selectionStart);
    } catch {
      res = null; // completion is a help: a failed lookup shows nothing
    }
    if (mine !== seq) return;
    if (!res || !res.items.length || document.activeElement !== ta) return close();
    state = { ...res, at: 0, prefix: ta.value.slice(res.from, res.to) };
    box.style.left = Math.min(caretX(ta, res.from), Math.max(0, ta.clientWidth - 260)) + "px";
    box.style.top = ta.offsetTop + ta.offsetHeight + 2 + "px";
    box.hidden = false;
    draw();
  };

  ta.addEventListener("input", (e) => {
    if (e.inputType === "deleteContentBackward" && !state) return;
    update();
  });
  ta.addEventListener("keydown", (e) => {
    if (e.key === " " && e.ctrlKey) {
      e.preventDefault();
      update();
      return;
    }
    if (!state || box.hidden) return;
    const n = state.items.length;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      state.at = (state.at + (e.key === "ArrowDown" ? 1 : n - 1)) % n;
      draw();
    } else if (e.key === "Enter" || e.key === "Tab") {
      e.preventDefault();
      e.stopImmediatePropagation();
      pick(state.at);
    } else if (e.key === "Escape") {
      e.preventDefault();
      close();
    }
  }, true);
  ta.addEventListener("blur", () => setTimeout(close, 100));
  ta.addEventListener("click", close);
  return { close };
}

// caretX estimates the x offset of position pos in ta's last line.
function caretX(ta, pos) {
  const line = ta.value.slice(0, pos).split("\n").pop();
  const cs = getComputedStyle(ta);
  const ctx = (caretX.c ||= document.createElement("canvas").getContext("2d"));
  ctx.font = `${cs.fontSize} ${cs.fontFamily}`;
  return ta.offsetLeft + parseFloat(cs.paddingLeft) + ctx.measureText(line).width - ta.scrollLeft;
}

function highlight(label, prefix) {
  if (!prefix) return label;
  const i = label.toLowerCase().indexOf(prefix.toLowerCase());
  if (i < 0) return label;
  return [label.slice(0, i), h("mark", null, label.slice(i, i + prefix.length)), label.slice(i + prefix.length)];
}

// rank filters candidates by prefix: those starting with it first, then
// those containing it, then those containing its letters in order;
// at most limit, each {label, detail, insert}.
export function rank(candidates, prefix, limit = 80) {
  const p = prefix.toLowerCase();
  const starts = [], contains = [], fuzzy = [];
  for (const c of candidates) {
    const l = c.label.toLowerCase();
    if (l === p) continue;
    if (l.startsWith(p)) starts.push(c);
    else if (l.includes(p)) contains.push(c);
    else if (p.length > 1 && subsequence(l, p)) fuzzy.push(c);
    if (starts.length >= limit) break;
  }
  return starts.concat(contains, fuzzy).slice(0, limit);
}

function subsequence(s, p) {
  let j = 0;
  for (let i = 0; i < s.length && j < p.length; i++) if (s[i] === p[j]) j++;
  return j === p.length;
}
