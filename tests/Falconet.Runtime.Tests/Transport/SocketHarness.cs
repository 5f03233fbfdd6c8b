using System;
using System.Buffers;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Transport;
using Falconet.Transport.Sockets;

namespace Falconet.Runtime.Tests.Transport;

/// <summary>A sockets transport bound to loopback port 0, with clients connected to it; disposal closes every socket and checks that every pool block came back.</summary>
internal sealed class SocketHarness : IAsyncDisposable
{
    public static readonly TimeSpan StepTimeout = TimeSpan.FromSeconds(15);

    private readonly List<Socket> _clients = new();
    private readonly List<TransportConnection> _connections = new();

    private SocketHarness(SocketTransportFactory factory, IConnectionListener listener)
    {
        Factory = factory;
        Listener = listener;
    }

    public SocketTransportFactory Factory { get; }

    public IConnectionListener Listener { get; }

    public static async Task<SocketHarness> StartAsync(int ioThreads = 2, IPAddress? address = null, bool trackLeaks = true, IoScheduling scheduling = IoScheduling.ThreadPool)
    {
        var factory = new SocketTransportFactory(new SocketTransportOptions { IoThreadCount = ioThreads, TrackLeaks = trackLeaks, Scheduling = scheduling });
        try
        {
            IConnectionListener listener = await factory.BindAsync(new IPEndPoint(address ?? IPAddress.Loopback, 0));
            return new SocketHarness(factory, listener);
        }
        catch
        {
            factory.Dispose();
            throw;
        }
    }

    /// <summary>Connects a client and accepts its server side.</summary>
    public async Task<(Socket Client, TransportConnection Server)> ConnectAsync()
    {
        var endpoint = (IPEndPoint)Listener.EndPoint;
        var client = new Socket(endpoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        lock (_clients)
        {
            _clients.Add(client);
        }

        ValueTask<TransportConnection?> accept = Listener.AcceptAsync();
        await client.ConnectAsync(endpoint).WaitAsync(StepTimeout);
        TransportConnection server = (await accept.AsTask().WaitAsync(StepTimeout))!;
        Assert.NotNull(server);
        lock (_connections)
        {
            _connections.Add(server);
        }

        return (client, server);
    }

    /// <summary>Echoes everything received until the peer closes: receive into a chain, send the whole chain in one call, consume.</summary>
    public static async Task EchoAsync(TransportConnection connection)
    {
        using var chain = new BlockChain(connection.Pool);
        while (true)
        {
            int received = await connection.ReceiveAsync(chain.GetWritableMemory()).ConfigureAwait(false);
            if (received == 0)
            {
                break;
            }

            chain.Advance(received);
            ReadOnlySequence<byte> pending = chain.GetSequence();
            await connection.SendAsync(pending).ConfigureAwait(false);
            chain.Consume(pending.End);
        }

        await connection.DisposeAsync().ConfigureAwait(false);
    }

    public static async Task SendAllAsync(Socket socket, ReadOnlyMemory<byte> data)
    {
        while (!data.IsEmpty)
        {
            int sent = await socket.SendAsync(data, SocketFlags.None).ConfigureAwait(false);
            data = data.Slice(sent);
        }
    }

    public static async Task ReceiveExactlyAsync(Socket socket, Memory<byte> target)
    {
        while (!target.IsEmpty)
        {
            int received = await socket.ReceiveAsync(target, SocketFlags.None).ConfigureAwait(false);
            if (received == 0)
            {
                throw new InvalidOperationException($"The server closed with {target.Length} bytes still expected.");
            }

            target = target.Slice(received);
        }
    }

    public async ValueTask DisposeAsync()
    {
        lock (_clients)
        {
            foreach (Socket client in _clients)
            {
                client.Dispose();
            }
        }

        foreach (TransportConnection connection in _connections)
        {
            await connection.DisposeAsync();
        }

        await Listener.DisposeAsync();
        try
        {
            foreach (SlabMemoryPool pool in Factory.Pools)
            {
                await pool.WaitForAllReturnedAsync(TimeSpan.FromSeconds(5));
            }
        }
        finally
        {
            await Factory.DisposeAsync();
        }
    }
}
