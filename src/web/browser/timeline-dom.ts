/**
 * Draws the tool timeline into an <ol>, keyed by toolCallId: a card is made once and then only
 * its changed texts are touched, so an open <details> stays open and nothing flickers. Text
 * goes in through textContent only, never as markup. Calls a delegated agent made are drawn
 * inside the card of the call that delegated, indented, in a block that can be folded.
 */
import type { ToolRow, ToolStatus } from '../../client';

const MARK_LABEL: Readonly<Record<ToolStatus, string>> = {
  running: 'running',
  completed: 'completed',
  failed: 'failed',
  unfinished: 'did not finish',
};

const MARK_TEXT: Readonly<Record<ToolStatus, string>> = { running: '', completed: '✓', failed: '✗', unfinished: '?' };

interface Card {
  li: HTMLLIElement;
  mark: HTMLSpanElement;
  duration: HTMLSpanElement;
  error: HTMLParagraphElement;
  args: HTMLDetailsElement;
  result: HTMLDetailsElement;
  /** The nested calls: a foldable block holding a list drawn like the top-level one. */
  nested: HTMLDetailsElement;
  nestedSummary: HTMLElement;
  nestedList: HTMLOListElement;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function setText(node: HTMLElement, text: string | undefined): void {
  const value = text ?? '';
  if (node.textContent !== value) node.textContent = value;
  node.hidden = text === undefined;
}

function detailsBlock(className: string, title: string): HTMLDetailsElement {
  const details = el('details', className);
  details.append(el('summary', undefined, title), el('pre'));
  details.hidden = true;
  return details;
}

function setDetails(details: HTMLDetailsElement, text: string | undefined): void {
  setText(details.querySelector('pre') as HTMLPreElement, text);
  details.hidden = text === undefined;
}

export class TimelineDom {
  private readonly cards = new Map<string, Card>();

  constructor(private readonly root: HTMLOListElement) {}

  clear(): void {
    this.cards.clear();
    this.root.replaceChildren();
  }

  render(groups: readonly ToolRow[][]): void {
    this.renderList(this.root, groups);
  }

  private renderList(root: HTMLOListElement, groups: readonly ToolRow[][]): void {
    groups.forEach((rows, i) => {
      let group = root.children[i] as HTMLLIElement | undefined;
      if (!group) {
        group = el('li', 'group-item');
        group.append(el('ol', 'group'));
        root.append(group);
      }
      const list = group.firstElementChild as HTMLOListElement;
      list.classList.toggle('group--parallel', rows.length > 1);
      list.setAttribute('aria-label', rows.length > 1 ? `${rows.length} tools in parallel` : 'tool');
      rows.forEach((row, j) => {
        const card = this.card(row);
        if (list.children[j] !== card.li) list.insertBefore(card.li, list.children[j] ?? null);
      });
      while (list.children.length > rows.length) list.lastElementChild?.remove();
    });
    while (root.children.length > groups.length) root.lastElementChild?.remove();
  }

  private card(row: ToolRow): Card {
    let card = this.cards.get(row.toolCallId);
    if (!card) {
      const li = el('li', 'tool');
      li.dataset.toolCallId = row.toolCallId;
      li.dataset.toolName = row.name;
      const head = el('div', 'tool__head');
      const mark = el('span', 'tool__mark');
      mark.setAttribute('role', 'img');
      const duration = el('span', 'tool__duration');
      head.append(mark, el('span', 'tool__name', row.name), duration);
      const error = el('p', 'tool__error');
      error.hidden = true;
      const args = detailsBlock('tool__args', 'Arguments');
      const result = detailsBlock('tool__result', 'Result');
      const nested = el('details', 'tool__nested');
      nested.open = true;
      nested.hidden = true;
      const nestedSummary = el('summary');
      const nestedList = el('ol', 'timeline timeline--nested');
      nested.append(nestedSummary, nestedList);
      li.append(head, error, args, result, nested);
      card = { li, mark, duration, error, args, result, nested, nestedSummary, nestedList };
      this.cards.set(row.toolCallId, card);
    }
    if (card.li.dataset.status !== row.status) {
      card.li.dataset.status = row.status;
      card.mark.textContent = MARK_TEXT[row.status];
      card.mark.setAttribute('aria-label', MARK_LABEL[row.status]);
    }
    setText(card.duration, row.durationText);
    setText(card.error, row.errorText);
    setDetails(card.args, row.argsText);
    setDetails(card.result, row.resultText);
    const count = row.children.length;
    card.nested.hidden = count === 0;
    if (count > 0) setText(card.nestedSummary, `${count} nested ${count === 1 ? 'call' : 'calls'}`);
    this.renderList(card.nestedList, row.childGroups);
    return card;
  }
}
