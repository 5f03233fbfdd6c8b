using System;
using System.IO;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Diagnostics;

namespace Falconet.Transport.Proxy;

/// <summary>
/// Reads the PROXY header of one accepted connection, where its transport schedules the connection's code, then hands out a
/// <see cref="ProxiedConnection"/> through the listener, or refuses the connection with a counted, logged reason.
/// </summary>
/// <remarks>
/// The header is received into one pool block and parsed there, in place; bytes received past it (the client's first bytes,
/// when the proxy sent them with the header) stay in that block for the connection's first receive. The deadline is one
/// <c>long</c> checked by the listener's heartbeat: when it passes, receiving stops and the read ends as a timeout.
/// </remarks>
internal sealed class ProxyHeaderRead : ConnectionPreparation
{
    private readonly ProxyConnectionListener _owner;
    private readonly TransportConnection _accepted;
    private ProxiedConnection? _connection;

    public ProxyHeaderRead(ProxyConnectionListener owner, TransportConnection accepted, long now, long timeout)
        : base(now, timeout)
    {
        _owner = owner;
        _accepted = accepted;
    }

    /// <summary>The accepted connection while the header is read; the proxied one once it was read.</summary>
    public override TransportConnection Connection => (TransportConnection?)_connection ?? _accepted;

    protected override async Task RunAsync()
    {
        if (!_owner.Settings.Trusts(_accepted.RemoteEndPoint))
        {
            // Nothing to tell a peer that may not send a header at all.
            _accepted.Abort();
            await RefuseAsync(ProxyRejections.UntrustedProxy, block: null).ConfigureAwait(false);
            return;
        }

        MemoryBlock? block = null;
        string? reason;
        try
        {
            block = _accepted.Pool.Rent();
            reason = await ReadAsync(block).ConfigureAwait(false);
        }
        catch (Exception exception) when (exception is IOException or ObjectDisposedException or OperationCanceledException)
        {
            reason = IsTimedOut ? ProxyRejections.Timeout : IsStopped ? ProxyRejections.ServerStopping : ProxyRejections.Truncated;
        }

        if (reason is null)
        {
            if (_owner.TryHandOut(this))
            {
                return;
            }

            reason = IsTimedOut ? ProxyRejections.Timeout : ProxyRejections.ServerStopping;
            await RefuseAsync(reason, block: null).ConfigureAwait(false);
            return;
        }

        await RefuseAsync(reason, block).ConfigureAwait(false);
    }

    /// <summary>Receives until the header is whole; null when it was, else the reason to refuse the connection.</summary>
    private async ValueTask<string?> ReadAsync(MemoryBlock block)
    {
        int limit = _owner.Settings.MaxHeaderSize;
        while (true)
        {
            int received = await _accepted.ReceiveAsync(block.WritableMemory).ConfigureAwait(false);
            if (received == 0)
            {
                return IsTimedOut ? ProxyRejections.Timeout : IsStopped ? ProxyRejections.ServerStopping : ProxyRejections.Truncated;
            }

            block.End += received;
            switch (ProxyHeaderParser.TryParse(block.Data.Span, limit, out ProxyHeader header, out string? reason))
            {
                case ProxyParseStatus.Complete:
                    block.Start = header.Length;
                    _connection = new ProxiedConnection(_accepted, in header, block);
                    ProxyLog.HeaderRead(_owner.Logger, _accepted.RemoteEndPoint, header.Version, header.Command, _connection.RemoteEndPoint);
                    return null;
                case ProxyParseStatus.Invalid:
                    return reason;
                default:
                    if (block.End == SlabMemoryPool.BlockSize)
                    {
                        // Only a limit above what one block holds could get here; the endpoint's validation forbids it.
                        return ProxyRejections.TooLarge;
                    }

                    break;
            }
        }
    }

    protected override void CloseUnclaimed() => _ = RefuseAsync(ProxyRejections.ServerStopping, block: null);

    /// <summary>Counts and logs the refusal, closes the connection (FIN unless it was aborted) and frees its place.</summary>
    private async Task RefuseAsync(string reason, MemoryBlock? block)
    {
        ServerMetrics.Count(ServerMetrics.RejectedConnections, reason);
        ProxyLog.Refused(_owner.Logger, _accepted.RemoteEndPoint, reason);
        try
        {
            await Connection.DisposeAsync().ConfigureAwait(false);
        }
        catch (Exception exception) when (exception is IOException or ObjectDisposedException)
        {
            // Closing a connection whose peer is gone: nothing more to tell it.
        }
        finally
        {
            // Only once the connection is disposed: no receive can still be writing into the block.
            if (block is not null && _connection is null)
            {
                block.Pool.Return(block);
            }

            _owner.Ended(this);
        }
    }
}
