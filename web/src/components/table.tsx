import { Table } from '@mantine/core';
import type { ReactNode } from 'react';
import { Pager } from './layout-parts';
import { SideScroll } from './SideScroll';

export interface Column<T> {
  /** Unique among the columns (React key). */
  key: string;
  header: ReactNode;
  cell(row: T): ReactNode;
  /** Numbers and money read best right-aligned. */
  align?: 'left' | 'right';
}

export interface DataTableProps<T> {
  /** What the table lists: its accessible name, shown as a caption when `showCaption`. */
  caption: string;
  showCaption?: boolean;
  columns: Column<T>[];
  rows: T[];
  rowKey(row: T): string;
  /** A list the server pages: Previous/Next and "x–y of N" below the table. */
  page?: { offset: number; limit: number; total: number; onChange(offset: number): void };
  /** Below this width (px) the table scrolls sideways instead of squeezing its columns (phones). */
  minWidth?: number;
}

/** A list as a table: named for assistive technology, scrolls sideways on a phone, paged when asked. */
export function DataTable<T>({ caption, showCaption = false, columns, rows, rowKey, page, minWidth = 640 }: DataTableProps<T>) {
  return (
    <>
      <SideScroll minWidth={minWidth}>
        <Table striped highlightOnHover verticalSpacing="xs" captionSide="top" aria-label={showCaption ? undefined : caption}>
          {showCaption && <Table.Caption>{caption}</Table.Caption>}
          <Table.Thead>
            <Table.Tr>
              {columns.map((column) => (
                <Table.Th key={column.key} ta={column.align}>
                  {column.header}
                </Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((row) => (
              <Table.Tr key={rowKey(row)}>
                {columns.map((column) => (
                  <Table.Td key={column.key} ta={column.align}>
                    {column.cell(row)}
                  </Table.Td>
                ))}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </SideScroll>
      {page && <Pager {...page} />}
    </>
  );
}
