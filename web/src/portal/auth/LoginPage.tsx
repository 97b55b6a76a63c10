import { Alert, Anchor, Button, PasswordInput, Stack, TextInput } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, errorMessage, unwrap } from '../../api/client';
import { AuthFrame, nextPath } from './AuthFrame';

/** Email and password; with two-factor on, a second step asks for the authenticator's code. */
export function LoginPage() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [needsCode, setNeedsCode] = useState(false);
  const done = () => window.location.assign(nextPath());

  const signIn = useMutation({
    mutationFn: () => unwrap(api.POST('/api/auth/sign-in', { body: { email, password } }), { redirectOn401: false }),
    onSuccess: (result) => (result.totpRequired ? setNeedsCode(true) : done()),
  });
  const totp = useMutation({
    mutationFn: () => unwrap(api.POST('/api/auth/totp', { body: { code: code.replace(/\s/g, '') } }), { redirectOn401: false }),
    onSuccess: done,
  });
  const startOver = () => {
    setNeedsCode(false);
    setCode('');
    setPassword('');
    signIn.reset();
    totp.reset();
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (needsCode) totp.mutate();
    else signIn.mutate();
  };

  if (needsCode) {
    return (
      <AuthFrame
        title="Two-factor authentication"
        subtitle="Enter the 6-digit code your authenticator app shows for Vouch, or one of your recovery codes."
        footer={
          <Anchor component="button" type="button" onClick={startOver}>
            Sign in with another account
          </Anchor>
        }
      >
        <form onSubmit={submit} noValidate>
          <Stack>
            <TextInput
              label="Authentication code"
              autoComplete="one-time-code"
              maxLength={12}
              value={code}
              onChange={(e) => setCode(e.currentTarget.value)}
              error={totp.error ? errorMessage(totp.error) : undefined}
              required
              autoFocus
            />
            <Button type="submit" loading={totp.isPending} fullWidth>
              Verify code
            </Button>
          </Stack>
        </form>
      </AuthFrame>
    );
  }

  return (
    <AuthFrame
      title="Sign in to Vouch"
      footer={
        <>
          New to Vouch? <Anchor href="/signup">Create an account</Anchor>
        </>
      }
    >
      <form onSubmit={submit} noValidate>
        <Stack>
          {signIn.error && (
            <Alert color="red" role="alert" title="Could not sign in">
              {errorMessage(signIn.error)}
            </Alert>
          )}
          <TextInput label="Email" type="email" autoComplete="email" value={email} onChange={(e) => setEmail(e.currentTarget.value)} required autoFocus />
          <PasswordInput label="Password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.currentTarget.value)} required />
          <Anchor href="/forgot-password" size="sm">
            Forgot your password?
          </Anchor>
          <Button type="submit" loading={signIn.isPending} fullWidth>
            Sign in
          </Button>
        </Stack>
      </form>
    </AuthFrame>
  );
}
