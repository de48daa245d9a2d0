/**
 * The page script: asks the agent through the client kit and draws the live timeline.
 * It finds the A2A endpoint from this server's agent card, streams SendStreamingMessage,
 * and lets the follower resume after a dropped connection (Last-Event-ID), so no frame is
 * lost or drawn twice.
 */
import {
  TimelineStore,
  cancelTask,
  discoverAgent,
  errorMessage,
  followMessage,
  timelineView,
  type DiscoveredAgent,
} from '../../client';
import { pageContent } from './page-content';
import { TimelineDom } from './timeline-dom';

/**
 * The card of the agent this page belongs to: beside the page, wherever the server mounted it
 * (the server serves the page at a path ending in "/", so relative URLs stay under its prefix).
 */
const CARD_URL = new URL('.well-known/agent-card.json', location.href).href;

function byId<T extends HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`the page has no #${id}`);
  return node as T;
}

const ui = {
  app: byId<HTMLElement>('app'),
  title: byId<HTMLHeadingElement>('title'),
  tagline: byId<HTMLParagraphElement>('tagline'),
  form: byId<HTMLFormElement>('ask'),
  question: byId<HTMLInputElement>('question'),
  send: byId<HTMLButtonElement>('send'),
  stop: byId<HTMLButtonElement>('stop'),
  examples: byId<HTMLUListElement>('examples'),
  narration: byId<HTMLParagraphElement>('narration'),
  connection: byId<HTMLParagraphElement>('connection'),
  tools: byId<HTMLElement>('tools'),
  timeline: byId<HTMLOListElement>('timeline'),
  answerSection: byId<HTMLElement>('answer-section'),
  answer: byId<HTMLParagraphElement>('answer'),
  error: byId<HTMLParagraphElement>('error'),
  agent: byId<HTMLSpanElement>('agent'),
};

const store = new TimelineStore();
const timeline = new TimelineDom(ui.timeline);
let agent: Promise<DiscoveredAgent> | undefined;
let current: AbortController | undefined;
let frameRequested = false;
let ticker: ReturnType<typeof setInterval> | undefined;

function show(node: HTMLElement, text: string | undefined): void {
  if (node.textContent !== (text ?? '')) node.textContent = text ?? '';
  node.hidden = text === undefined;
}

function render(): void {
  frameRequested = false;
  const view = timelineView(store.getState(), Date.now());
  ui.app.dataset.taskState = view.taskState ?? (current ? 'sending' : 'idle');
  show(ui.narration, view.done ? undefined : view.narration);
  ui.tools.hidden = view.rows.length === 0;
  timeline.render(view.groups);
  const answer = view.answer ?? (view.failed ? `The task ${view.taskState}: ${view.failureText}` : undefined);
  ui.answerSection.hidden = answer === undefined;
  show(ui.answer, answer);
  // Running tools show their time so far: redraw while any runs.
  const running = view.rows.some((r) => r.status === 'running');
  if (running && !ticker) ticker = setInterval(scheduleRender, 100);
  if (!running && ticker) {
    clearInterval(ticker);
    ticker = undefined;
  }
}

function scheduleRender(): void {
  if (frameRequested) return;
  frameRequested = true;
  requestAnimationFrame(render);
}

function setBusy(busy: boolean): void {
  ui.send.disabled = busy;
  ui.stop.hidden = !busy;
  ui.question.setAttribute('aria-busy', String(busy));
}

function findAgent(): Promise<DiscoveredAgent> {
  agent ??= discoverAgent(location.origin, { cardUrl: CARD_URL }).then(
    (found) => {
      describeAgent(found.card);
      ui.agent.textContent = `${pageContent(found.card).name} · ${found.endpoint.binding} ${found.endpoint.protocolVersion}`;
      return found;
    },
    (err: unknown) => {
      agent = undefined; // try again on the next question
      throw err;
    },
  );
  return agent;
}

async function ask(question: string): Promise<void> {
  current?.abort();
  const controller = new AbortController();
  current = controller;
  store.reset();
  timeline.clear();
  show(ui.error, undefined);
  show(ui.connection, undefined);
  setBusy(true);
  try {
    const { endpoint } = await findAgent();
    const events = followMessage({
      endpoint,
      text: question,
      signal: controller.signal,
      onReconnect: (r) => show(ui.connection, `Connection lost; reconnecting (attempt ${r.attempt})…`),
    });
    for await (const input of events) {
      show(ui.connection, undefined);
      store.dispatch(input);
    }
    // A stream that ended before the task did leaves nothing running in the view.
    if (current === controller) store.settle('the stream ended before the task did');
  } catch (err) {
    if (!controller.signal.aborted) {
      show(ui.error, errorMessage(err));
      store.settle(errorMessage(err));
    } else if (current === controller) {
      show(ui.error, 'Stopped.');
      store.settle('stopped');
    }
  } finally {
    if (current === controller) {
      current = undefined;
      setBusy(false);
      show(ui.connection, undefined);
    }
    scheduleRender();
  }
}

/** Stop: the server cancels the task (its run and tools), then the page drops the stream. */
async function stop(): Promise<void> {
  const controller = current;
  if (!controller) return;
  ui.stop.disabled = true;
  const taskId = store.getState().taskId;
  try {
    if (taskId) await cancelTask({ endpoint: (await findAgent()).endpoint, taskId });
  } catch {
    // The task may have ended meanwhile, or the server be gone: dropping the stream is all that is left.
  } finally {
    ui.stop.disabled = false;
    controller.abort();
  }
}

/** Title, description and example questions from the agent card: the page shows the host's own agent. */
function describeAgent(card: Record<string, unknown>): void {
  const content = pageContent(card);
  document.title = `${content.name} · live tool timeline`;
  ui.title.textContent = content.name;
  if (content.description) ui.tagline.textContent = content.description;
  ui.question.placeholder = content.examples.length > 0 ? `Ask something, e.g. ${content.examples[0]}` : 'Ask something';
  ui.examples.replaceChildren();
  for (const example of content.examples) {
    const item = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = example;
    button.addEventListener('click', () => {
      ui.question.value = example;
      void ask(example);
    });
    item.append(button);
    ui.examples.append(item);
  }
}

function start(): void {
  store.subscribe(scheduleRender);
  ui.form.addEventListener('submit', (event) => {
    event.preventDefault();
    const question = ui.question.value.trim();
    if (question) void ask(question);
  });
  ui.stop.addEventListener('click', () => void stop());
  findAgent().catch((err: unknown) => show(ui.agent, `Agent card unavailable: ${errorMessage(err)}`));
  ui.question.focus();
}

start();
