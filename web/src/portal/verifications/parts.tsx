import { Alert, Badge, Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import type { ReactNode } from 'react';
import { errorMessage } from '../../api/client';
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

/**
 * The confirmation before a cancellation (a verification, a session): what it does, its error if
 * it failed, "Keep it" and "Yes, cancel it".
 */
export function ConfirmCancel({ opened, title, onClose, onConfirm, pending, error, children }: {
  opened: boolean;
  title: string;
  onClose: () => void;
  onConfirm: () => void;
  pending: boolean;
  error: unknown;
  /** What cancelling does, in a sentence or two. */
  children: ReactNode;
}) {
  return (
    <Modal opened={opened} onClose={onClose} title={title} centered>
      <Stack>
        <Text size="sm">{children}</Text>
        {error ? (
          <Alert color="red" role="alert">
            {errorMessage(error)}
          </Alert>
        ) : null}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Keep it
          </Button>
          <Button color="red" loading={pending} onClick={onConfirm}>
            Yes, cancel it
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
