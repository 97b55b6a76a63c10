import { Alert, Anchor, Button, Loader, PasswordInput, Stack, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { ApiRequestError, api, errorMessage, unwrap } from '../../api/client';
import { ORG_KEY } from '../context';
import { AuthFrame, nextPath, searchParam } from './AuthFrame';
import { fieldError, formError } from './form-errors';

/** Opens the link of the verification mail; a dead link offers a new one. */
export function VerifyEmailPage() {
  const token = searchParam('token');
  const verify = useMutation({ mutationFn: () => unwrap(api.POST('/api/auth/verify-email', { body: { token } }), { redirectOn401: false }) });
  const { mutate } = verify;
  useEffect(() => {
    if (token) mutate();
  }, [token, mutate]);
  return (
    <AuthFrame title="Confirm your email">
      {!token ? (
        <Stack>
          <Text>This page needs the link from the email we sent you. Open the email and follow its link, or ask for a new one.</Text>
          <ResendVerification />
        </Stack>
      ) : verify.isPending || verify.isIdle ? (
        <Stack align="center" role="status">
          <Loader size="sm" />
          <Text>Confirming your email…</Text>
        </Stack>
      ) : verify.isError ? (
        <Stack>
          <Alert color="red" role="alert" title="This link did not work">
            {errorMessage(verify.error)}
          </Alert>
          <ResendVerification />
        </Stack>
      ) : (
        <Stack>
          <Alert color="teal" title="Email confirmed" role="status">
            Your email address is confirmed. You can now ask for live API access.
          </Alert>
          <Button component="a" href="/">
            Go to the portal
          </Button>
        </Stack>
      )}
    </AuthFrame>
  );
}

/** Mails a new verification link to the signed-in person; signed out, it says to sign in first. */
function ResendVerification() {
  const resend = useMutation({ mutationFn: () => unwrap(api.POST('/api/auth/resend-verification'), { redirectOn401: false }) });
  const signedOut = resend.error instanceof ApiRequestError && resend.error.status === 401;
  if (resend.isSuccess) {
    return (
      <Alert color="teal" role="status" title="New link sent">
        Check your inbox: the new link works for 24 hours.
      </Alert>
    );
  }
  return (
    <Stack gap="xs">
      {resend.error &&
        (signedOut ? (
          <Alert color="yellow" role="alert">
            Sign in first, then ask for a new link. <Anchor href={`/login?next=${encodeURIComponent('/verify-email')}`}>Sign in</Anchor>
          </Alert>
        ) : (
          <Alert color="red" role="alert">
            {errorMessage(resend.error)}
          </Alert>
        ))}
      <Button variant="light" loading={resend.isPending} onClick={() => resend.mutate()}>
        Send a new link
      </Button>
      <Button component="a" href="/" variant="subtle">
        Go to the portal
      </Button>
    </Stack>
  );
}

export function ForgotPasswordPage() {
  const [email, setEmail] = useState('');
  const send = useMutation({ mutationFn: () => unwrap(api.POST('/api/auth/forgot-password', { body: { email } }), { redirectOn401: false }) });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    send.mutate();
  };
  return (
    <AuthFrame title="Reset your password" subtitle="We mail you a link to choose a new one." footer={<Anchor href="/login">Back to sign in</Anchor>}>
      {send.isSuccess ? (
        <Alert color="teal" title="Check your email" role="status">
          If {email} has a Vouch account, we sent it a link to set a new password. The link works once, for one hour.
        </Alert>
      ) : (
        <form onSubmit={submit} noValidate>
          <Stack>
            {formError(send.error, ['email']) && (
              <Alert color="red" role="alert">
                {formError(send.error, ['email'])}
              </Alert>
            )}
            <TextInput label="Email" type="email" autoComplete="email" value={email} onChange={(e) => setEmail(e.currentTarget.value)} error={fieldError(send.error, 'email')} required />
            <Button type="submit" loading={send.isPending} fullWidth>
              Send the reset link
            </Button>
          </Stack>
        </form>
      )}
    </AuthFrame>
  );
}

export function ResetPasswordPage() {
  const token = searchParam('token');
  // Where signing in leads afterwards: a field agent's invitation link says /field.
  const next = nextPath();
  const signInHref = next === '/' ? '/login' : `/login?next=${encodeURIComponent(next)}`;
  const [password, setPassword] = useState('');
  // With two-factor on, the server asks for a code too ("code is required"); the field appears then.
  const [code, setCode] = useState('');
  const [askCode, setAskCode] = useState(false);
  const reset = useMutation({
    mutationFn: () => unwrap(api.POST('/api/auth/reset-password', { body: { token, password, ...(askCode ? { code: code.replace(/\s/g, '') } : {}) } }), { redirectOn401: false }),
    onError: (error) => {
      if (fieldError(error, 'code')) setAskCode(true);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    reset.mutate();
  };
  if (!token) {
    return (
      <AuthFrame title="Choose a new password" footer={<Anchor href="/forgot-password">Ask for a reset link</Anchor>}>
        <Text>This page needs the link from the password-reset email. Open the email and follow its link.</Text>
      </AuthFrame>
    );
  }
  const general = formError(reset.error, ['password', 'code']);
  return (
    <AuthFrame title="Choose a new password" footer={<Anchor href={signInHref}>Back to sign in</Anchor>}>
      {reset.isSuccess ? (
        <Stack>
          <Alert color="teal" title="Password changed" role="status">
            Your password is changed and every device was signed out. Sign in with the new password.
          </Alert>
          <Button component="a" href={signInHref}>
            Sign in
          </Button>
        </Stack>
      ) : (
        <form onSubmit={submit} noValidate>
          <Stack>
            {general && (
              <Alert color="red" role="alert">
                {general} <Anchor href="/forgot-password">Ask for a new link</Anchor>
              </Alert>
            )}
            <PasswordInput
              label="New password"
              description="At least 10 characters"
              autoComplete="new-password"
              value={password}
              onChange={(e) => setPassword(e.currentTarget.value)}
              error={fieldError(reset.error, 'password')}
              required
            />
            {askCode && (
              <TextInput
                label="Two-factor code"
                description="Your account has two-factor authentication: the 6-digit code of your authenticator app, or a recovery code"
                autoComplete="one-time-code"
                maxLength={12}
                value={code}
                onChange={(e) => setCode(e.currentTarget.value)}
                error={fieldError(reset.error, 'code')}
                required
                autoFocus
              />
            )}
            <Button type="submit" loading={reset.isPending} fullWidth>
              Set the new password
            </Button>
          </Stack>
        </form>
      )}
    </AuthFrame>
  );
}

/** The link of the sign-up mail: choose a password, and the account is made and signed in. */
export function CompleteSignUpPage() {
  const token = searchParam('token');
  const [password, setPassword] = useState('');
  const complete = useMutation({
    mutationFn: () => unwrap(api.POST('/api/auth/complete-sign-up', { body: { token, password } }), { redirectOn401: false }),
    onSuccess: ({ orgId }) => {
      localStorage.setItem(ORG_KEY, orgId);
      window.location.assign('/');
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    complete.mutate();
  };
  if (!token) {
    return (
      <AuthFrame title="Finish creating your account" footer={<Anchor href="/signup">Sign up</Anchor>}>
        <Text>This page needs the link from the sign-up email. Open the email and follow its link, or sign up again.</Text>
      </AuthFrame>
    );
  }
  const general = formError(complete.error, ['password']);
  return (
    <AuthFrame title="Finish creating your account" subtitle="Your email address is confirmed. Choose the password you will sign in with." footer={<Anchor href="/login">Sign in instead</Anchor>}>
      <form onSubmit={submit} noValidate>
        <Stack>
          {general && (
            <Alert color="red" role="alert">
              {general} {complete.error instanceof ApiRequestError && complete.error.status === 409 ? <Anchor href="/login">Sign in</Anchor> : <Anchor href="/signup">Sign up again</Anchor>}
            </Alert>
          )}
          <PasswordInput
            label="Choose a password"
            description="At least 10 characters; a phrase of a few words is easy to remember"
            autoComplete="new-password"
            value={password}
            onChange={(e) => setPassword(e.currentTarget.value)}
            error={fieldError(complete.error, 'password')}
            required
            autoFocus
          />
          <Button type="submit" loading={complete.isPending} fullWidth>
            Create account
          </Button>
        </Stack>
      </form>
    </AuthFrame>
  );
}

/** The link of an invitation mail: a new account joins with a name and password, an existing one signs in first. */
export function AcceptInvitationPage() {
  const token = searchParam('token');
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const invitation = useQuery({
    queryKey: ['invitation', token],
    queryFn: () => unwrap(api.GET('/api/invitations/{token}', { params: { path: { token } } }), { redirectOn401: false }),
    enabled: token !== '',
  });
  const accept = useMutation({
    mutationFn: () => unwrap(api.POST('/api/invitations/accept', { body: invitation.data?.hasAccount ? { token } : { token, name, password } }), { redirectOn401: false }),
    onSuccess: ({ orgId }) => {
      localStorage.setItem(ORG_KEY, orgId);
      window.location.assign('/');
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    accept.mutate();
  };
  if (!token) return <AuthFrame title="Invitation">This page needs the link from your invitation email.</AuthFrame>;
  if (invitation.isPending) {
    return (
      <AuthFrame title="Invitation">
        <Stack align="center" role="status">
          <Loader size="sm" />
          <Text>Loading the invitation…</Text>
        </Stack>
      </AuthFrame>
    );
  }
  if (invitation.isError) {
    return (
      <AuthFrame title="Invitation" footer={<Anchor href="/login">Sign in</Anchor>}>
        <Alert color="red" role="alert" title="This invitation cannot be used">
          {errorMessage(invitation.error)}
        </Alert>
      </AuthFrame>
    );
  }
  const { orgName, email, role, hasAccount } = invitation.data;
  const signIn = `/login?next=${encodeURIComponent(window.location.pathname + window.location.search)}`;
  const general = formError(accept.error, ['name', 'password']);
  return (
    <AuthFrame title={`Join ${orgName} on Vouch`} subtitle={`You are invited as ${role}, with ${email}.`}>
      <form onSubmit={submit} noValidate>
        <Stack>
          {general && (
            <Alert color="red" role="alert">
              {general}
              {hasAccount && (
                <>
                  {' '}
                  <Anchor href={signIn}>Sign in as {email}</Anchor>
                </>
              )}
            </Alert>
          )}
          {hasAccount ? (
            <Text size="sm">
              You already have a Vouch account. <Anchor href={signIn}>Sign in as {email}</Anchor> if you have not, then accept.
            </Text>
          ) : (
            <>
              <TextInput label="Email" value={email} readOnly description="The invitation is for this address" />
              <TextInput label="Your name" autoComplete="name" value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError(accept.error, 'name')} required />
              <PasswordInput
                label="Choose a password"
                description="At least 10 characters"
                autoComplete="new-password"
                value={password}
                onChange={(e) => setPassword(e.currentTarget.value)}
                error={fieldError(accept.error, 'password')}
                required
              />
            </>
          )}
          <Button type="submit" loading={accept.isPending} fullWidth>
            Accept the invitation
          </Button>
        </Stack>
      </form>
    </AuthFrame>
  );
}
