import { tool } from '@langchain/core/tools';
import { z } from 'zod';

const PRICES: Record<string, number> = { ACME: 42.5, GLOBEX: 17.25 };

/** The host's own tool: any LangChain tool works; its name and schema are all toolstream needs. */
export const stockPrice = tool(
  async ({ ticker }) => {
    const price = PRICES[ticker.toUpperCase()];
    if (price === undefined) throw new Error(`unknown ticker ${ticker}`);
    return { ticker: ticker.toUpperCase(), price, currency: 'USD' };
  },
  {
    name: 'stock_price',
    description: 'The latest price of a stock',
    schema: z.object({ ticker: z.string().describe('the stock symbol, e.g. ACME') }),
  },
);
