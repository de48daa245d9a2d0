/**
 * bench/kernel-split.ts's kinds: what the kernel was doing in a clock sample of a server, and what
 * touched the page in a page-fault sample (chains as `perf script` prints them, leaf first).
 */
import { faultKind, kernelKind } from '../bench/kernel-split';

describe('kernelKind', () => {
  it('leaves samples in user space out', () => {
    expect(kernelKind({ kernel: [], user: ['Builtins_LoadIC'] })).toBeUndefined();
  });

  it('tells a page fault, a preemption, a wait and a write’s waking of its reader apart', () => {
    expect(kernelKind({ kernel: ['clear_page_erms', 'handle_mm_fault', 'do_user_addr_fault', 'exc_page_fault', 'asm_exc_page_fault'], user: [] })).toBe('page fault');
    // On this VM the sample lands where interrupts come back on: the kind is the chain's.
    const preempted = ['pvm_irq_enable', 'finish_task_switch.isra.0', '__schedule', 'schedule', 'exit_to_user_mode_loop', 'do_syscall_64'];
    expect(kernelKind({ kernel: preempted, user: ['__GI___libc_write'] })).toBe('switch: preempted');
    expect(kernelKind({ kernel: ['finish_task_switch.isra.0', '__schedule', 'schedule', 'futex_do_wait', '__futex_wait', 'do_futex', '__x64_sys_futex'], user: [] })).toBe('switch: futex wait');
    const waking = ['pvm_irq_enable', '_raw_spin_unlock_irqrestore', 'sock_def_readable', 'tcp_data_queue', 'tcp_v4_rcv', 'tcp_sendmsg', 'sock_write_iter', 'vfs_write', 'ksys_write', 'do_syscall_64'];
    expect(kernelKind({ kernel: waking, user: [] })).toBe('write: waking the reader');
    expect(kernelKind({ kernel: ['tcp_write_xmit', 'tcp_sendmsg', 'sock_write_iter', 'do_iter_readv_writev', 'vfs_writev', 'do_writev', 'do_syscall_64'], user: [] })).toBe('write: the rest');
    expect(kernelKind({ kernel: ['do_accept', '__sys_accept4', '__x64_sys_accept4', 'do_syscall_64'], user: [] })).toBe('system call: accept4');
  });
});

describe('faultKind', () => {
  it('names what touched the page', () => {
    expect(faultKind(['__memmove_avx512_unaligned_erms', 'v8::internal::Scavenger::ScavengeObject<…>', 'v8::internal::Scavenger::ScavengePage'])).toBe('scavenger (copying, promoting)');
    // A new page's header is counted as such, whoever took the page.
    expect(faultKind(['v8::internal::BasicMemoryChunk::BasicMemoryChunk', 'v8::internal::MemoryChunk::MemoryChunk', 'v8::internal::Page::Page', 'v8::internal::Scavenger::ScavengePage'])).toBe(
      'V8: a new heap page (its header)',
    );
    expect(faultKind(['v8::internal::compiler::Schedule::AddNode'])).toBe('compiler');
    expect(faultKind(['_int_malloc', '[unknown]', 'node::StreamBase::Writev'])).toBe('malloc < node::StreamBase::Writev');
    expect(faultKind(['Builtins_StringAdd_CheckNone', '[unknown]'])).toBe('JavaScript or runtime allocation');
  });
});
