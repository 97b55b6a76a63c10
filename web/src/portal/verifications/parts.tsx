import { Badge } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { STATUS_LABELS, type ExplorerStatus } from './labels';

const STATUS_COLOURS: Record<ExplorerStatus, string> = { in_progress: 'blue', verified: 'teal', not_verified: 'red', cancelled: 'gray' };

/** A verification's status as a coloured badge; the colour is a hint, the words are the meaning. */
export function StatusPill({ status }: { status: ExplorerStatus }) {
  return (
    <Badge variant="light" color={STATUS_COLOURS[status] ?? 'gray'}>
      {STATUS_LABELS[status] ?? status}
    </Badge>
  );
}

/** Phone width: lists show two stacked columns instead of a wide table that scrolls sideways. */
export function useCompact(): boolean {
  return useMediaQuery('(max-width: 40em)') ?? false;
}
