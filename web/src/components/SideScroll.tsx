import { Table, Text } from '@mantine/core';
import type { ReactNode } from 'react';

/**
 * A wide table on a narrow screen: it keeps `minWidth` and scrolls sideways (Mantine's scroll
 * container), and on a phone says so ("Scroll sideways to see every column"), because a
 * cut-off table there looks complete. The hint follows the screen's width (CSS breakpoint).
 */
export function SideScroll({ minWidth, children }: { minWidth: number; children: ReactNode }) {
  return (
    <>
      <Text size="xs" c="dimmed" mb={4} hiddenFrom="sm">
        Scroll sideways to see every column →
      </Text>
      <Table.ScrollContainer minWidth={minWidth}>{children}</Table.ScrollContainer>
    </>
  );
}
