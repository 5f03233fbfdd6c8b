using System;
using System.Buffers;
using System.Net;
using System.Net.Security;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Transport.Tls;

namespace Falconet.Transport.Proxy;

/// <summary>
/// A connection whose PROXY header was read: the client's address (when the header gave one) is its
/// <see cref="RemoteEndPoint"/>, what the header said is <see cref="ProxyInfo"/>, and everything else passes through to the
/// accepted connection.
/// </summary>
/// <remarks>
/// The block the header arrived in is kept while it holds bytes received after the header: the first receives copy them out
/// (once per connection, usually nothing or a TLS ClientHello), then the block goes back to the pool. The remote endpoint and
/// <see cref="ProxyProtocolInfo"/> are made on first use; TLVs are copied out of the block only when the header has some.
/// </remarks>
internal sealed class ProxiedConnection : TransportConnection
{
    private readonly TransportConnection _inner;
    private readonly ProxyHeader _header;
    private readonly byte[] _tlvs;
    private MemoryBlock? _leftover;
    private EndPoint? _remote;
    private ProxyProtocolInfo? _info;
    private int _receiveStopped;

    public ProxiedConnection(TransportConnection inner, in ProxyHeader header, MemoryBlock block)
    {
        _inner = inner;
        _header = header;
        _tlvs = header.TlvLength == 0 ? [] : block.Memory.Span.Slice(header.TlvOffset, header.TlvLength).ToArray();
        if (block.Length > 0)
        {
            _leftover = block;
        }
        else
        {
            block.Pool.Return(block);
        }
    }

    /// <summary>The connection the header arrived on.</summary>
    public TransportConnection Inner => _inner;

    public override EndPoint? LocalEndPoint => _inner.LocalEndPoint;

    /// <summary>The client's endpoint from the header; the proxy's own for a LOCAL command or a header without IP addresses.</summary>
    public override EndPoint? RemoteEndPoint => _remote ??= _header.HasAddresses
        ? new IPEndPoint(_header.Source.ToIPAddress(_header.Family), _header.SourcePort)
        : _inner.RemoteEndPoint;

    public override ProxyProtocolInfo? ProxyInfo => _info ??= new ProxyProtocolInfo(_header.Version, _header.Command, _header.Family,
        _header.HasAddresses ? RemoteEndPoint : null,
        _header.HasAddresses ? new IPEndPoint(_header.Destination.ToIPAddress(_header.Family), _header.DestinationPort) : null,
        _tlvs);

    public override SlabMemoryPool Pool => _inner.Pool;

    public override bool IsOnIoThread => _inner.IsOnIoThread;

    internal override bool IsOwnIoThread => _inner.IsOwnIoThread;

    public override bool CompletesOnThreadPool => _inner.CompletesOnThreadPool;

    public override int MaxGatheredSegments => _inner.MaxGatheredSegments;

    public override TlsConnectionInfo? TlsInfo => _inner.TlsInfo;

    public override SslApplicationProtocol NegotiatedApplicationProtocol => _inner.NegotiatedApplicationProtocol;

    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken ct = default)
    {
        MemoryBlock? leftover = _leftover;
        if (leftover is null || Volatile.Read(ref _receiveStopped) != 0)
        {
            return _inner.ReceiveAsync(buffer, ct);
        }

        // What the proxy sent with the header: handed over before anything new is received.
        int count = Math.Min(buffer.Length, leftover.Length);
        leftover.Data.Span[..count].CopyTo(buffer.Span);
        leftover.Start += count;
        if (leftover.Length == 0)
        {
            _leftover = null;
            leftover.Pool.Return(leftover);
        }

        return new ValueTask<int>(count);
    }

    public override ValueTask SendAsync(ReadOnlySequence<byte> buffers, CancellationToken ct = default) => _inner.SendAsync(buffers, ct);

    internal override int MinLastWriteFromCallerMemory => _inner.MinLastWriteFromCallerMemory;

    internal override ValueTask SendBeforeMoreAsync(ReadOnlySequence<byte> buffers, CancellationToken ct) => _inner.SendBeforeMoreAsync(buffers, ct);

    public override void Schedule(IThreadPoolWorkItem workItem) => _inner.Schedule(workItem);

    public override void StopReceiving()
    {
        Volatile.Write(ref _receiveStopped, 1);
        _inner.StopReceiving();
    }

    public override void ShutdownSend() => _inner.ShutdownSend();

    public override void Abort() => _inner.Abort();

    public override async ValueTask DisposeAsync()
    {
        await _inner.DisposeAsync().ConfigureAwait(false);

        // No receive is pending now: bytes never read go back with their block.
        MemoryBlock? leftover = Interlocked.Exchange(ref _leftover, null);
        if (leftover is not null)
        {
            leftover.Pool.Return(leftover);
        }
    }
}
