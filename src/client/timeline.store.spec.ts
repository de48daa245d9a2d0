import { events10 } from './fixtures/streams';
import { initialTimelineState } from './timeline.reducer';
import { TimelineStore } from './timeline.store';

describe('TimelineStore', () => {
  it('tells listeners about real changes only, and stops after unsubscribe', () => {
    const store = new TimelineStore();
    const heard: number[] = [];
    const unsubscribe = store.subscribe((s) => heard.push(s.tools.size));
    const [task, thinking] = events10();
    store.dispatch({ data: task, eventId: '1', receivedAt: 0 });
    store.dispatch({ data: task, eventId: '1', receivedAt: 0 });
    store.dispatch({ data: thinking, eventId: '2', receivedAt: 0 });
    expect(heard).toHaveLength(2);
    unsubscribe();
    store.reset();
    expect(heard).toHaveLength(2);
    expect(store.getState()).toBe(initialTimelineState);
  });

  it('follows a whole stream and resolves with the final state', async () => {
    async function* stream() {
      let i = 0;
      for (const data of events10()) yield { data, eventId: String(++i), receivedAt: 0 };
    }
    const final = await new TimelineStore().follow(stream());
    expect(final.taskState).toBe('completed');
    expect(final.tools.ids()).toEqual(['call_w', 'call_t', 'call_d']);
  });
});
