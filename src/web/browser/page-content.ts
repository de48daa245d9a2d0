/**
 * What the page says about the agent, read from its agent card: a host's page shows its own
 * agent (name, description, example questions from its skills' `examples`), not the demo's.
 */
export interface PageContent {
  name: string;
  description?: string;
  examples: string[];
}

/** Example questions offered at most; a card may list many more. */
export const MAX_EXAMPLES = 6;
/** Longest example or description shown, in characters. */
const MAX_TEXT = 300;

const text = (value: unknown): string | undefined => {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  return trimmed.length > MAX_TEXT ? `${trimmed.slice(0, MAX_TEXT - 1)}…` : trimmed;
};

/** The page's content from a card of any shape: missing or malformed fields are left out. */
export function pageContent(card: Record<string, unknown>): PageContent {
  const skills = Array.isArray(card.skills) ? card.skills : [];
  const examples = new Set<string>();
  for (const skill of skills) {
    const listed = typeof skill === 'object' && skill !== null ? (skill as { examples?: unknown }).examples : undefined;
    for (const example of Array.isArray(listed) ? listed : []) {
      const shown = text(example);
      if (shown && examples.size < MAX_EXAMPLES) examples.add(shown);
    }
  }
  return { name: text(card.name) ?? 'agent', description: text(card.description), examples: [...examples] };
}
