// The initial schema. Portable DDL through Kysely's schema builder; composite primary keys put
// clinic_id first so that an id can never reach across clinics, even through an import upsert.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  // Text columns that are compared or ordered must sort by code point on both databases.
  const textC = dialect === 'postgres' ? sql`text collate "C"` : sql`text`;

  await db.schema
    .createTable('clinics')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull().defaultTo('es'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('clinic_id', 'text', (c) => c.references('clinics.id'))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('users_clinic').on('users').columns(['clinic_id']).execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('clinic_id', 'text', (c) => c.notNull().references('clinics.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('hint', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.references('users.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .addColumn('last_used_at', 'bigint')
    .execute();
  await db.schema.createIndex('api_keys_clinic').on('api_keys').columns(['clinic_id', 'created_at']).execute();

  await db.schema
    .createTable('clientas')
    .addColumn('clinic_id', 'text', (c) => c.notNull().references('clinics.id'))
    .addColumn('id', textC, (c) => c.notNull())
    .addColumn('nombre', 'text', (c) => c.notNull())
    .addColumn('nombre_norm', textC, (c) => c.notNull())
    .addColumn('telefono', 'text', (c) => c.notNull())
    .addColumn('telefono_digits', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('idioma', 'text')
    .addColumn('vip', 'integer', (c) => c.notNull())
    .addColumn('cliente_desde', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('clientas_pk', ['clinic_id', 'id'])
    .execute();
  await db.schema.createIndex('clientas_by_name').on('clientas').columns(['clinic_id', 'nombre_norm', 'id']).execute();
  await db.schema.createIndex('clientas_by_vip_name').on('clientas').columns(['clinic_id', 'vip', 'nombre_norm', 'id']).execute();

  await db.schema
    .createTable('citas')
    .addColumn('clinic_id', 'text', (c) => c.notNull())
    .addColumn('id', textC, (c) => c.notNull())
    .addColumn('clienta_id', textC, (c) => c.notNull())
    .addColumn('fecha_hora', 'bigint', (c) => c.notNull())
    .addColumn('dia', textC, (c) => c.notNull())
    .addColumn('servicio', 'text', (c) => c.notNull())
    .addColumn('duracion_min', 'integer', (c) => c.notNull())
    .addColumn('precio_cents', 'bigint', (c) => c.notNull())
    .addColumn('estado', 'text', (c) => c.notNull())
    .addColumn('profesional_nombre', 'text', (c) => c.notNull())
    .addColumn('sede_nombre', 'text', (c) => c.notNull())
    .addColumn('notas', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('citas_pk', ['clinic_id', 'id'])
    .addForeignKeyConstraint('citas_clienta_fk', ['clinic_id', 'clienta_id'], 'clientas', ['clinic_id', 'id'], (fk) =>
      fk.deferrable().initiallyDeferred(),
    )
    .execute();
  await db.schema.createIndex('citas_by_time').on('citas').columns(['clinic_id', 'fecha_hora', 'id']).execute();
  await db.schema.createIndex('citas_by_estado_time').on('citas').columns(['clinic_id', 'estado', 'fecha_hora', 'id']).execute();
  await db.schema.createIndex('citas_by_clienta').on('citas').columns(['clinic_id', 'clienta_id', 'fecha_hora']).execute();

  await db.schema
    .createTable('llamadas')
    .addColumn('clinic_id', 'text', (c) => c.notNull())
    .addColumn('id', textC, (c) => c.notNull())
    .addColumn('clienta_id', textC)
    .addColumn('fecha_hora', 'bigint', (c) => c.notNull())
    .addColumn('dia', textC, (c) => c.notNull())
    .addColumn('cliente_nombre', 'text')
    .addColumn('telefono_caller', 'text', (c) => c.notNull())
    .addColumn('duracion_segundos', 'integer', (c) => c.notNull())
    .addColumn('resultado', 'text', (c) => c.notNull())
    .addColumn('idioma', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('llamadas_pk', ['clinic_id', 'id'])
    .addForeignKeyConstraint('llamadas_clienta_fk', ['clinic_id', 'clienta_id'], 'clientas', ['clinic_id', 'id'], (fk) =>
      fk.deferrable().initiallyDeferred(),
    )
    .execute();
  await db.schema.createIndex('llamadas_by_time').on('llamadas').columns(['clinic_id', 'fecha_hora', 'id']).execute();
  await db.schema
    .createIndex('llamadas_by_resultado_time')
    .on('llamadas')
    .columns(['clinic_id', 'resultado', 'fecha_hora', 'id'])
    .execute();
  await db.schema.createIndex('llamadas_by_clienta').on('llamadas').columns(['clinic_id', 'clienta_id', 'fecha_hora']).execute();

  await db.schema
    .createTable('citas_por_dia')
    .addColumn('clinic_id', 'text', (c) => c.notNull())
    .addColumn('dia', textC, (c) => c.notNull())
    .addColumn('estado', 'text', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('citas_por_dia_pk', ['clinic_id', 'dia', 'estado'])
    .execute();
  await db.schema
    .createTable('llamadas_por_dia')
    .addColumn('clinic_id', 'text', (c) => c.notNull())
    .addColumn('dia', textC, (c) => c.notNull())
    .addColumn('resultado', 'text', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('llamadas_por_dia_pk', ['clinic_id', 'dia', 'resultado'])
    .execute();
  await db.schema
    .createTable('clientas_por_vip')
    .addColumn('clinic_id', 'text', (c) => c.notNull())
    .addColumn('vip', 'integer', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('clientas_por_vip_pk', ['clinic_id', 'vip'])
    .execute();
}
