using System;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Transport.Tls.OpenSsl;

namespace Falconet.Transport.Tls;

/// <summary>
/// The OpenSSL engine's handshake and receives: OpenSSL is called until it needs the peer's records (its BIO says retry),
/// then the connection receives them (<see cref="TlsTransportStream.WaitForCiphertextAsync"/>) and calls again; what OpenSSL wrote meanwhile is sent first.
/// </summary>
internal sealed partial class TlsConnection
{
    private OpenSslReceive? _openSslReceive;

    /// <summary>Drives SSL_do_handshake: each step's output is sent, then the peer's next records are received.</summary>
    private async Task HandshakeWithOpenSslAsync(OpenSslSession session)
    {
        while (!session.Handshake())
        {
            _stream.Push(1);
            session.WaitingForRecords = true;
            try
            {
                await _stream.WaitForCiphertextAsync(CancellationToken.None).ConfigureAwait(false);
            }
            finally
            {
                session.WaitingForRecords = false;
            }
        }

        System.Security.Cryptography.X509Certificates.X509Certificate2? client = session.ValidateClientCertificate();

        // Messages written by the last step (the TLS 1.3 session tickets, TLS 1.2's Finished) go out before the first response.
        await _stream.SendBufferedAsync().ConfigureAwait(false);
        _info = session.Info(client);
    }

    private ValueTask<int> ReceiveWithOpenSsl(OpenSslSession session, Memory<byte> buffer, CancellationToken ct)
    {
        while (true)
        {
            int received;
            try
            {
                received = ReadOpenSsl(session, buffer.Span);
                if (received >= 0)
                {
                    return new ValueTask<int>(received);
                }

                session.WaitingForRecords = true;
                ValueTask<int> wait = _stream.WaitForCiphertextAsync(ct);
                if (!wait.IsCompleted)
                {
                    _openSslReceive ??= new OpenSslReceive(this);
                    return new ValueTask<int>(_receive, _receive.Begin(_openSslReceive.Start(session, wait, buffer, ct)));
                }

                session.WaitingForRecords = false;
                wait.GetAwaiter().GetResult();
            }
            catch (Exception exception)
            {
                session.WaitingForRecords = false;
                try
                {
                    return new ValueTask<int>(CompleteOpenSslReceive(ValueTask.FromException<int>(ReadAfterRecords.AsReadFailure(exception, ct))));
                }
                catch (Exception mapped)
                {
                    return ValueTask.FromException<int>(mapped);
                }
            }
        }
    }

    /// <summary>One SSL_read_ex; sends what OpenSSL wrote during it (alerts, a KeyUpdate's answer) in the order it was made.</summary>
    private int ReadOpenSsl(OpenSslSession session, Span<byte> buffer)
    {
        try
        {
            return session.Read(buffer);
        }
        finally
        {
            // Also after a failure: the fatal alert OpenSSL wrote tells the peer why the connection ends.
            if (session.WroteOutput)
            {
                _stream.Push(1);
            }
        }
    }

    private int CompleteOpenSslReceive(ValueTask<int> read)
    {
        try
        {
            return read.GetAwaiter().GetResult();
        }
        catch (Exception) when (IsClosedLocally || Volatile.Read(ref _receiveStopped) != 0)
        {
            // Stopped or closed here: the read ends as the contract says, with 0, even when a record was cut short.
            return 0;
        }
    }

    /// <summary>
    /// A receive that waits for the peer's records, then reads through OpenSSL where they arrived, and waits again while
    /// OpenSSL needs more: one per connection, reused, nothing allocated per call.
    /// </summary>
    private sealed class OpenSslReceive : ReceiveSource
    {
        private readonly TlsConnection _connection;
        private readonly Action _onRecords;
        private OpenSslSession? _session;
        private ValueTask<int> _pending;
        private Memory<byte> _buffer;
        private CancellationToken _token;

        public OpenSslReceive(TlsConnection connection)
        {
            _connection = connection;
            _onRecords = OnRecords;
        }

        public ValueTask<int> Start(OpenSslSession session, ValueTask<int> wait, Memory<byte> buffer, CancellationToken ct)
        {
            short version = Reset();
            _session = session;
            _buffer = buffer;
            _token = ct;
            Await(wait);
            return new ValueTask<int>(this, version);
        }

        private void Await(ValueTask<int> wait)
        {
            _pending = wait;
            wait.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(_onRecords);
        }

        private void OnRecords()
        {
            OpenSslSession session = _session!;
            ValueTask<int> wait = _pending;
            _pending = default;
            try
            {
                while (true)
                {
                    session.WaitingForRecords = false;
                    wait.GetAwaiter().GetResult();
                    int received = _connection.ReadOpenSsl(session, _buffer.Span);
                    if (received >= 0)
                    {
                        Finish(received, null);
                        return;
                    }

                    session.WaitingForRecords = true;
                    wait = _connection._stream.WaitForCiphertextAsync(_token);
                    if (!wait.IsCompleted)
                    {
                        Await(wait);
                        return;
                    }
                }
            }
            catch (Exception exception)
            {
                session.WaitingForRecords = false;
                Finish(0, ReadAfterRecords.AsReadFailure(exception, _token));
            }
        }

        private void Finish(int received, Exception? error)
        {
            _session = null;
            _buffer = default;
            _token = default;
            Complete(received, error);
        }
    }
}
