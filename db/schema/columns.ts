// Column helpers shared by every table definition. The PostgreSQL builders from drizzle are the one
// definition of the schema; db/sqlite-tables.ts derives the SQLite twin from them at runtime, and the
// migration runner renders DDL for both dialects from the same objects.
import { bigint, boolean, integer, serial, text, timestamp, varchar } from 'drizzle-orm/pg-core';

export const id = () => serial('id').primaryKey();
export const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
export const createdAt = () => ts('created_at').notNull().defaultNow();
export const updatedAt = () => ts('updated_at').notNull().defaultNow();
/** Token and money counters: integers that can pass 2^31. Read back as JS numbers (safe to 2^53). */
export const counter = (name: string) => bigint(name, { mode: 'number' }).notNull().default(0);
export const int = (name: string) => integer(name);
export const str = (name: string, length = 255) => varchar(name, { length });
export const txt = (name: string) => text(name);
export const bool = (name: string, dflt: boolean) => boolean(name).notNull().default(dflt);
/** YYYY-MM-DD */
export const day = (name = 'date') => varchar(name, { length: 10 });
