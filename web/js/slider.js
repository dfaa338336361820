// A two-thumb range slider (WAI-ARIA APG multi-thumb slider): each thumb
// is a role=slider with aria-valuemin/max/now/text; the thumbs cannot
// cross (the lower thumb's maximum is the upper thumb's value). Keys:
// arrows ±1, Page Up/Down ±10, Home/End to the bounds. Pointer drag too.
import { el, clamp } from './util.js';

export class RangeSlider {
  // opts: {min, max, lo, hi, label, key, valueText(v), onInput(lo, hi), onChange(lo, hi)}
  constructor(opts) {
    this.o = opts;
    this.min = opts.min;
    this.max = Math.max(opts.max, opts.hi, opts.lo);
    this.lo = opts.lo;
    this.hi = opts.hi;
    this.fill = el('div', { class: 'rs-fill' });
    this.thumbs = ['lo', 'hi'].map((which) => el('div', {
      class: `rs-thumb rs-${which}`,
      role: 'slider',
      tabindex: 0,
      'aria-orientation': 'horizontal',
      'aria-label': `${opts.label}: ${which === 'lo' ? 'first' : 'last'} layer`,
      dataset: { key: `${opts.key}/${which}`, thumb: which },
      on: {
        keydown: (e) => this.key(e, which),
        pointerdown: (e) => this.grab(e, which),
        keyup: () => this.commit(),
        blur: () => this.commit(),
      },
    }));
    this.track = el('div', { class: 'rs-track', on: { pointerdown: (e) => this.trackDown(e) } },
      this.fill, ...this.thumbs);
    this.root = el('div', { class: 'rs', role: 'group', 'aria-label': opts.label }, this.track);
    this.dirty = false;
    this.paint();
  }

  value(which) { return which === 'lo' ? this.lo : this.hi; }

  bounds(which) {
    return which === 'lo' ? [this.min, this.hi] : [this.lo, this.max];
  }

  set(lo, hi, notify = true) {
    lo = clamp(Math.round(lo), this.min, this.max);
    hi = clamp(Math.round(hi), this.min, this.max);
    if (lo > hi) [lo, hi] = [hi, lo];
    if (lo === this.lo && hi === this.hi) return;
    this.lo = lo;
    this.hi = hi;
    this.paint();
    if (notify) {
      this.dirty = true;
      this.o.onInput?.(lo, hi);
    }
  }

  commit() {
    if (!this.dirty) return;
    this.dirty = false;
    this.o.onChange?.(this.lo, this.hi);
  }

  paint() {
    const span = Math.max(1, this.max - this.min);
    const pos = (v) => `${((v - this.min) / span) * 100}%`;
    // CSSOM, not style attributes: the CSP forbids inline styles.
    this.thumbs[0].style.left = pos(this.lo);
    this.thumbs[1].style.left = pos(this.hi);
    this.fill.style.left = pos(this.lo);
    this.fill.style.width = `${((this.hi - this.lo) / span) * 100}%`;
    for (const t of this.thumbs) {
      const which = t.dataset.thumb;
      const [bmin, bmax] = this.bounds(which);
      const v = this.value(which);
      t.setAttribute('aria-valuemin', bmin);
      t.setAttribute('aria-valuemax', bmax);
      t.setAttribute('aria-valuenow', v);
      t.setAttribute('aria-valuetext', this.o.valueText ? this.o.valueText(v) : `layer ${v}`);
    }
  }

  key(e, which) {
    const [bmin, bmax] = this.bounds(which);
    const v = this.value(which);
    let n = null;
    switch (e.key) {
      case 'ArrowLeft': case 'ArrowDown': n = v - 1; break;
      case 'ArrowRight': case 'ArrowUp': n = v + 1; break;
      case 'PageDown': n = v - 10; break;
      case 'PageUp': n = v + 10; break;
      case 'Home': n = bmin; break;
      case 'End': n = bmax; break;
      default: return;
    }
    e.preventDefault();
    n = clamp(n, bmin, bmax);
    if (which === 'lo') this.set(n, this.hi);
    else this.set(this.lo, n);
  }

  valueAt(clientX) {
    const r = this.track.getBoundingClientRect();
    const f = r.width ? (clientX - r.left) / r.width : 0;
    return Math.round(this.min + clamp(f, 0, 1) * (this.max - this.min));
  }

  grab(e, which, thumb = e.currentTarget) {
    e.preventDefault();
    e.stopPropagation();
    const t = thumb;
    t.focus();
    t.setPointerCapture(e.pointerId);
    const move = (ev) => {
      const [bmin, bmax] = this.bounds(which);
      const n = clamp(this.valueAt(ev.clientX), bmin, bmax);
      if (which === 'lo') this.set(n, this.hi);
      else this.set(this.lo, n);
    };
    const up = () => {
      t.removeEventListener('pointermove', move);
      t.removeEventListener('pointerup', up);
      t.removeEventListener('pointercancel', up);
      this.commit();
    };
    t.addEventListener('pointermove', move);
    t.addEventListener('pointerup', up);
    t.addEventListener('pointercancel', up);
  }

  trackDown(e) {
    const v = this.valueAt(e.clientX);
    const which = Math.abs(v - this.lo) <= Math.abs(v - this.hi) ? 'lo' : 'hi';
    if (which === 'lo') this.set(v, this.hi);
    else this.set(this.lo, v);
    this.grab(e, which, this.thumbs[which === 'lo' ? 0 : 1]);
  }
}
