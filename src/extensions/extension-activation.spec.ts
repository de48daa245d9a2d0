import {
  activatedExtensions,
  isToolCallV1Active,
  parseExtensionList,
  requestedExtensions,
} from './extension-activation';
import { TOOL_CALL_V1_EXTENSION_URI } from './tool-call-v1';

const OTHER = 'https://example.com/ext/other-v1';

describe('extension activation headers', () => {
  it('reads A2A-Extensions (1.0) from Node headers, case-insensitively, trimming whitespace', () => {
    expect(requestedExtensions({ 'a2a-extensions': ` ${TOOL_CALL_V1_EXTENSION_URI} ,  ${OTHER}  ` })).toEqual([
      TOOL_CALL_V1_EXTENSION_URI,
      OTHER,
    ]);
    expect(requestedExtensions({ 'A2A-Extensions': TOOL_CALL_V1_EXTENSION_URI })).toEqual([TOOL_CALL_V1_EXTENSION_URI]);
  });

  it('reads X-A2A-Extensions (0.3) and merges repeated headers without duplicates', () => {
    expect(
      requestedExtensions({
        'x-a2a-extensions': [OTHER, `${TOOL_CALL_V1_EXTENSION_URI},${OTHER}`],
        'a2a-extensions': TOOL_CALL_V1_EXTENSION_URI,
      }),
    ).toEqual([TOOL_CALL_V1_EXTENSION_URI, OTHER]);
  });

  it('reads a Fetch Headers object', () => {
    const h = new Headers();
    h.append('A2A-Extensions', OTHER);
    h.append('A2A-Extensions', TOOL_CALL_V1_EXTENSION_URI);
    expect(requestedExtensions(h)).toEqual([OTHER, TOOL_CALL_V1_EXTENSION_URI]);
  });

  it('returns undefined when no extension header is sent, or only blanks', () => {
    expect(requestedExtensions({ accept: 'text/event-stream' })).toBeUndefined();
    expect(requestedExtensions({ 'a2a-extensions': ' , ,' })).toBeUndefined();
    expect(requestedExtensions(undefined)).toBeUndefined();
    expect(parseExtensionList([''])).toEqual([]);
  });

  it('echoes only the supported URIs, in the order requested', () => {
    expect(activatedExtensions([OTHER, TOOL_CALL_V1_EXTENSION_URI], [TOOL_CALL_V1_EXTENSION_URI])).toEqual([
      TOOL_CALL_V1_EXTENSION_URI,
    ]);
    expect(activatedExtensions(undefined, [TOOL_CALL_V1_EXTENSION_URI])).toEqual([]);
  });

  it('activates tool-call-v1 when listed, or (by default) when no header is sent', () => {
    expect(isToolCallV1Active([TOOL_CALL_V1_EXTENSION_URI])).toBe(true);
    expect(isToolCallV1Active(undefined)).toBe(true);
    expect(isToolCallV1Active(undefined, { whenNoHeader: false })).toBe(false);
    expect(isToolCallV1Active([OTHER])).toBe(false);
  });
});
