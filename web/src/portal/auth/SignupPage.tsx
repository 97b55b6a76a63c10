import { Alert, Anchor, Button, PasswordInput, Stack, TextInput } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ApiRequestError, api, unwrap } from '../../api/client';
import { AuthFrame } from './AuthFrame';
import { fieldError, formError } from './form-errors';

const FIELDS = ['name', 'email', 'password', 'organizationName'] as const;

/** A new account and a new organization; the person lands on Get started, signed in. */
export function SignupPage() {
  const [form, setForm] = useState({ name: '', email: '', password: '', organizationName: '' });
  const set = (key: keyof typeof form) => (event: { currentTarget: { value: string } }) => setForm({ ...form, [key]: event.currentTarget.value });
  const signUp = useMutation({
    mutationFn: () => unwrap(api.POST('/api/auth/sign-up', { body: form }), { redirectOn401: false }),
    onSuccess: () => window.location.assign('/'),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    signUp.mutate();
  };
  const taken = signUp.error instanceof ApiRequestError && signUp.error.status === 409 ? signUp.error.message : undefined;
  const error = (field: (typeof FIELDS)[number]) => fieldError(signUp.error, field);
  const general = taken ? undefined : formError(signUp.error, FIELDS);
  return (
    <AuthFrame
      title="Create your Vouch account"
      subtitle="Start in the sandbox at once; ask for live access when you are ready."
      footer={
        <>
          Already have an account? <Anchor href="/login">Sign in</Anchor>
        </>
      }
    >
      <form onSubmit={submit} noValidate>
        <Stack>
          {general && (
            <Alert color="red" role="alert" title="Could not create the account">
              {general}
            </Alert>
          )}
          <TextInput label="Your name" autoComplete="name" value={form.name} onChange={set('name')} error={error('name')} required />
          <TextInput
            label="Work email"
            type="email"
            autoComplete="email"
            value={form.email}
            onChange={set('email')}
            error={
              taken ? (
                <>
                  {taken} <Anchor href="/login" size="xs">Sign in</Anchor>
                </>
              ) : (
                error('email')
              )
            }
            required
          />
          <PasswordInput
            label="Password"
            description="At least 10 characters; a phrase of a few words is easy to remember"
            autoComplete="new-password"
            value={form.password}
            onChange={set('password')}
            error={error('password')}
            required
          />
          <TextInput label="Company name" autoComplete="organization" value={form.organizationName} onChange={set('organizationName')} error={error('organizationName')} required />
          <Button type="submit" loading={signUp.isPending} fullWidth>
            Create account
          </Button>
        </Stack>
      </form>
    </AuthFrame>
  );
}
