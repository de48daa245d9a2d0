/** DI token of the Narrator built from RuntimeModule options. */
export const NARRATOR = Symbol('NARRATOR');
