import { Anchor, Box, Center, Paper, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';

/** The frame of the signed-out pages: the name, a title, a card. */
export function AuthFrame({ title, subtitle, children, footer }: { title: string; subtitle?: ReactNode; children: ReactNode; footer?: ReactNode }) {
  return (
    <Center mih="100vh" p="md" bg="gray.0">
      <Box w="100%" maw={420}>
        <Stack gap="xs" mb="lg" align="center">
          <Anchor href="/" underline="never" fw={800} fz={28} c="blue.7">
            Vouch
          </Anchor>
          <Title order={1} size="h3" ta="center">
            {title}
          </Title>
          {subtitle && (
            <Text c="dimmed" ta="center" size="sm">
              {subtitle}
            </Text>
          )}
        </Stack>
        <Paper withBorder shadow="sm" p="lg" radius="md">
          {children}
        </Paper>
        {footer && (
          <Text ta="center" size="sm" mt="md">
            {footer}
          </Text>
        )}
      </Box>
    </Center>
  );
}

/**
 * Where to go after signing in: the `next` of the URL when it is a page of this site, else home.
 * `next` is resolved as the browser would resolve it, against this page, and kept only when it
 * lands on this origin: a test of its text alone lets `/\evil.example` through, which browsers
 * read as `//evil.example`.
 */
export function nextPath(): string {
  const next = new URLSearchParams(window.location.search).get('next');
  if (!next) return '/';
  try {
    const url = new URL(next, window.location.origin);
    if (url.origin !== window.location.origin || !['http:', 'https:'].includes(url.protocol)) return '/';
    return url.pathname + url.search + url.hash;
  } catch {
    return '/';
  }
}

export function searchParam(name: string): string {
  return new URLSearchParams(window.location.search).get(name) ?? '';
}
