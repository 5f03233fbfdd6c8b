using System;
using System.IO;
using System.Net.Security;
using System.Security.Authentication;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Diagnostics;

namespace Falconet.Transport.Tls;

/// <summary>
/// The TLS handshake of one connection accepted by a <see cref="TlsConnectionListener"/>: runs where the transport schedules
/// the connection's code (<see cref="TransportConnection.Schedule"/>: its libuv loop, or the thread pool for sockets), then
/// hands the TLS connection out through the listener, or closes it and counts why it failed.
/// </summary>
/// <remarks>
/// The deadline is one <c>long</c> checked by the listener's heartbeat, like the HTTP timeouts: no timer per connection.
/// When it passes, receiving stops, the pending read wakes with the end of the stream and the handshake fails; the
/// connection then closes with a FIN, not a reset.
/// </remarks>
internal sealed class TlsHandshake : ConnectionPreparation
{
    private static readonly byte[] s_unrecognizedNameAlert = [21, 3, 3, 0, 2, 2, 112];

    private readonly TlsConnectionListener _owner;
    private readonly TlsServerSettings _settings;
    private readonly TlsConnection _connection;
    private bool _unknownServerName;

    public TlsHandshake(TlsConnectionListener owner, TransportConnection accepted, TlsServerSettings settings, long now)
        : base(now, settings.HandshakeTimeout)
    {
        _owner = owner;
        _settings = settings;
        _connection = new TlsConnection(accepted, settings.MaxBytesInFlight, settings.OpenSsl);
    }

    /// <summary>The TLS connection (its handshake complete once handed out).</summary>
    public override TransportConnection Connection => _connection;

    protected override void CloseUnclaimed() => _ = FailAsync("server_stopping", failure: null);

    /// <summary>Picks the options for the ClientHello's SNI host name (called by SslStream during the handshake).</summary>
    public SslServerAuthenticationOptions SelectOptions(string? hostName)
    {
        SslServerAuthenticationOptions? options = _settings.For(hostName);
        if (options is null)
        {
            _unknownServerName = true;
            throw new AuthenticationException($"No certificate serves the host name '{hostName}'.");
        }

        return options;
    }

    protected override async Task RunAsync()
    {
        Exception? failure = null;
        try
        {
            await _connection.AuthenticateAsServerAsync(TlsServerSettings.SelectOptions, this).ConfigureAwait(false);
        }
        catch (Exception exception)
        {
            failure = exception;
        }

        string reason;
        if (failure is null)
        {
            TimeSpan elapsed = _owner.Clock.GetElapsedTime(Started);
            ServerMetrics.RecordTlsHandshake(elapsed.TotalSeconds, VersionTag(_connection.TlsInfo!.Protocol));
            TlsLog.HandshakeCompleted(_owner.Logger, _connection.RemoteEndPoint, _connection.TlsInfo.Protocol, elapsed.TotalMilliseconds);
            if (_owner.TryHandOut(this))
            {
                return;
            }

            reason = IsTimedOut ? "timeout" : "server_stopping";
        }
        else
        {
            reason = Classify(failure);
        }

        await FailAsync(reason, failure).ConfigureAwait(false);
    }

    /// <summary>Counts and logs why the handshake failed, closes the connection and frees its place.</summary>
    private async Task FailAsync(string reason, Exception? failure)
    {
        ServerMetrics.Count(ServerMetrics.FailedTlsHandshakes, reason);
        TlsLog.HandshakeFailed(_owner.Logger, _connection.RemoteEndPoint, reason, failure);
        try
        {
            await CloseAsync().ConfigureAwait(false);
        }
        catch (Exception exception) when (exception is IOException or ObjectDisposedException)
        {
            // Closing a connection whose peer is gone: nothing more to tell it.
        }
        finally
        {
            _owner.Ended(this);
        }
    }

    private async ValueTask CloseAsync()
    {
        if (_unknownServerName)
        {
            // RFC 6066 section 3: a server that refuses an SNI name should say so with a fatal unrecognized_name alert.
            _connection.RecordStream.Write(s_unrecognizedNameAlert);
        }

        // An alert OpenSSL or SslStream wrote before failing goes out if the socket takes it at once; a peer that does
        // not read is not waited for (closing fails that send).
        ValueTask alert = default;
        bool pending = false;
        try
        {
            alert = _connection.RecordStream.SendBufferedAsync();
            pending = !alert.IsCompleted;
            if (!pending)
            {
                alert.GetAwaiter().GetResult();
            }
        }
        catch (IOException)
        {
        }

        await _connection.DisposeAsync().ConfigureAwait(false);
        if (pending)
        {
            try
            {
                await alert.ConfigureAwait(false);
            }
            catch (IOException)
            {
            }
        }
    }

    private string Classify(Exception failure)
    {
        if (IsTimedOut)
        {
            return "timeout";
        }

        if (IsStopped)
        {
            return "server_stopping";
        }

        if (_unknownServerName || _connection.UnknownServerName)
        {
            return "unknown_server_name";
        }

        if (_connection.ClientCertificateRejected)
        {
            return "client_certificate";
        }

        TlsTransportStream records = _connection.RecordStream;
        if (records.FirstByte >= 0 && records.FirstByte != TlsTransportStream.HandshakeRecordType)
        {
            return "not_tls";
        }

        if (records.EndOfStream || failure is ConnectionResetException || failure.InnerException is ConnectionResetException)
        {
            return records.FirstByte < 0 ? "closed_by_peer" : "truncated";
        }

        return "protocol";
    }

    private static string VersionTag(SslProtocols protocol) => protocol switch
    {
        SslProtocols.Tls13 => "1.3",
        SslProtocols.Tls12 => "1.2",
        _ => protocol.ToString(),
    };
}
