import { describeModelError } from './openai-compatible';

const at = 'http://127.0.0.1:9/v1';
const withStatus = (status: number, message: string) => Object.assign(new Error(message), { status });
const network = (code: string) => Object.assign(new Error('Connection error.'), { name: 'APIConnectionError', cause: Object.assign(new TypeError('fetch failed'), { cause: { code } }) });

describe('describeModelError', () => {
  it.each([
    [network('ECONNREFUSED'), `could not reach the model at ${at}: connection refused`],
    [network('ENOTFOUND'), `could not reach the model at ${at}: host not found`],
    [Object.assign(new Error('Connection error.'), { name: 'APIConnectionError', cause: new Error('socket hang up') }), `could not reach the model at ${at}: socket hang up`],
    [withStatus(401, '401 Incorrect API key provided'), `the model at ${at} refused the credentials (401): Incorrect API key provided`],
    [withStatus(404, '404 model not found'), `the model at ${at} answered 404 (is the model "m" served there, and is the path right?): model not found`],
    [withStatus(429, '429 slow down\n\nTroubleshooting URL: https://example.invalid/'), `the model at ${at} is rate-limiting requests (429): slow down`],
    [withStatus(503, '503 status code (no body)'), `the model at ${at} failed (503): no details given`],
    [withStatus(422, '422 bad tools'), `the model at ${at} rejected the request (422): bad tools`],
    [new Error('weird'), `the model at ${at} failed: weird`],
  ])('%#: says where and why', (err, text) => {
    expect(describeModelError(err, at, 'm')).toBe(text);
  });
});
