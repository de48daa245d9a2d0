/** DI token of the Narrator built from RuntimeModule options. */
export const NARRATOR = Symbol('NARRATOR');

/** DI token of RuntimeModule's own EventEmitter2, which carries the default bus (not the application's emitter). */
export const RUNTIME_EMITTER = Symbol('RUNTIME_EMITTER');
