// The web UI's offer to migrate a graph-mode recompute_config: a training YAML whose top-level recompute_config MindSpore
// Transformers applies in graph mode can be rewritten, through POST
// /api/v1/migrate (`memopt migrate`), as the recompute / recompute_comm
// sections that mean the same plan. This module finds the text that
// carries the block and draws store.migrate; main.js asks and accepts.
import { el, clear } from './util.js';

const BLOCK = /^recompute_config[ \t]*:/m;

// The YAML panel's text when it has a top-level recompute_config (an
// uploaded or pasted graph-mode training YAML: the panel holds the whole
// file), else null.
export function migrateSource(state) {
  return BLOCK.test(state.yaml) ? { where: 'yaml', text: state.yaml } : null;
}

// The warnings of a migrate answer for the keys it dropped.
export function droppedKeys(data) {
  return ((data && data.warnings) || []).filter((w) => w.code === 'no-equivalent');
}

function droppedList(dropped) {
  const ul = el('ul', { class: 'migrate-dropped' });
  for (const w of dropped) {
    ul.append(el('li', {},
      el('span', { class: 'where', text: w.line ? `line ${w.line}: ` : '' }),
      el('code', { text: w.path.replace(/^recompute_config\./, '') }),
      ` ${w.message.replace(/^migrate: \S+ /, '')}`));
  }
  return ul;
}

// Draws the offer (store.migrate: {key, where, data}, data the answer of
// /migrate or null while it is asked); hidden when there is nothing to offer.
export function renderMigrate(box, m, accept) {
  clear(box);
  box.hidden = true;
  if (!m || !m.data) return;
  if (m.data.yaml) {
    const dropped = droppedKeys(m.data);
    box.append(el('p', {
      text: 'This is a graph-mode training YAML: MindSpore Transformers applies its recompute_config. '
        + 'memopt can write the same plan as the recompute / recompute_comm sections, in the block\'s place; every other line stays.',
    }));
    if (dropped.length) {
      box.append(el('p', { text: 'What the sections cannot say is dropped (no equivalent):' }), droppedList(dropped));
    }
    const button = el('button', { type: 'button', id: 'migrate-accept', text: 'Migrate recompute_config to recompute / recompute_comm' });
    button.addEventListener('click', accept);
    box.append(button);
    box.hidden = false;
  } else if (m.data.error) {
    box.append(el('p', { text: `recompute_config cannot be migrated: ${m.data.error}` }));
    box.hidden = false;
  }
}

// What the status line says after a migration.
export function migratedText(dropped) {
  const keys = dropped.map((w) => w.path.replace(/^recompute_config\./, ''));
  return `Migrated recompute_config to the recompute sections${keys.length ? `; dropped (no equivalent): ${keys.join(', ')}` : ''}. Undo brings the block back.`;
}
