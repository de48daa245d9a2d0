import { MAX_EXAMPLES, pageContent } from './page-content';

describe('pageContent: the page follows the agent card', () => {
  it("takes the name, the description and every skill's examples, in order, once each", () => {
    const content = pageContent({
      name: 'Stock desk',
      description: 'Looks up stock prices.',
      skills: [
        { id: 'prices', examples: ['stock_price ticker=ACME', 'stock_price ticker=INIT'] },
        { id: 'none' },
        { id: 'again', examples: ['stock_price ticker=ACME', '  fx from=EUR to=USD  '] },
      ],
    });
    expect(content).toEqual({
      name: 'Stock desk',
      description: 'Looks up stock prices.',
      examples: ['stock_price ticker=ACME', 'stock_price ticker=INIT', 'fx from=EUR to=USD'],
    });
  });

  it('leaves out what is missing or malformed, and bounds what it shows', () => {
    expect(pageContent({})).toEqual({ name: 'agent', description: undefined, examples: [] });
    expect(pageContent({ name: 42, description: ' ', skills: 'x' })).toEqual({ name: 'agent', description: undefined, examples: [] });
    expect(pageContent({ skills: [null, { examples: [1, '', 'ok', { a: 1 }] }] }).examples).toEqual(['ok']);
    const many = pageContent({ skills: [{ examples: Array.from({ length: 20 }, (_, i) => `q${i}`) }], description: 'd'.repeat(5000) });
    expect(many.examples).toHaveLength(MAX_EXAMPLES);
    expect(many.description).toHaveLength(300);
  });
});
