import type { ColumnType } from 'kysely';

/** An organization's branding of the hosted flow and its session defaults (0036). */
export interface OrganizationBrandingTable {
  org_id: string;
  display_name: ColumnType<string | null, string | null | undefined, string | null>;
  colour: ColumnType<string | null, string | null | undefined, string | null>;
  logo_file_id: ColumnType<string | null, string | null | undefined, string | null>;
  logo_content_type: ColumnType<string | null, string | null | undefined, string | null>;
  logo_size: ColumnType<number | null, number | null | undefined, number | null>;
  logo_width: ColumnType<number | null, number | null | undefined, number | null>;
  logo_height: ColumnType<number | null, number | null | undefined, number | null>;
  default_redirect_url: ColumnType<string | null, string | null | undefined, string | null>;
  allowed_origins: ColumnType<string[], string[] | undefined, string[]>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

declare module '../../platform/db/schema.js' {
  interface DB {
    organization_branding: OrganizationBrandingTable;
  }
}
