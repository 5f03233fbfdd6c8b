using System;
using System.Buffers;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Transport;
using Falconet.Transport.IoUring;
using Falconet.Transport.Libuv;
using Falconet.Transport.Sockets;
using Shouldly;

namespace Falconet.Runtime.Tests.Transport;

/// <summary>Which built-in transport a harness runs.</summary>
public enum TransportUnderTest
{
    Sockets,
    Libuv,
    IoUring,
}

/// <summary>A transport bound to loopback port 0, with clients connected to it; disposal closes every socket and checks that every pool block came back.</summary>
internal sealed class TransportHarness : IAsyncDisposable
{
    public static readonly TimeSpan StepTimeout = TimeSpan.FromSeconds(15);

    private readonly List<Socket> _clients = new();
    private readonly List<TransportConnection> _connections = new();

    private TransportHarness(ITransportFactory factory, IConnectionListener listener)
    {
        Factory = factory;
        Listener = listener;
    }

    public ITransportFactory Factory { get; }

    public IConnectionListener Listener { get; }

    /// <summary>Starts <paramref name="transport"/> with <paramref name="ioThreads"/> pools (libuv and io_uring: loops) and binds it.</summary>
    /// <remarks>
    /// <paramref name="scheduling"/> null takes each transport's default: the thread pool for sockets, the loop thread for libuv and io_uring.
    /// </remarks>
    public static Task<TransportHarness> StartAsync(TransportUnderTest transport, int ioThreads = 2, IPAddress? address = null, bool trackLeaks = true, IoScheduling? scheduling = null)
        => StartAsync(transport switch
        {
            TransportUnderTest.Sockets => new SocketTransportFactory(new SocketTransportOptions
            {
                IoThreadCount = ioThreads,
                TrackLeaks = trackLeaks,
                Scheduling = scheduling ?? IoScheduling.ThreadPool,
            }),
            TransportUnderTest.IoUring => new IoUringTransportFactory(new IoUringTransportOptions
            {
                LoopCount = ioThreads,
                TrackLeaks = trackLeaks,
                Scheduling = scheduling ?? IoScheduling.IoThreads,
            }),
            _ => new LibuvTransportFactory(new LibuvTransportOptions
            {
                LoopCount = ioThreads,
                TrackLeaks = trackLeaks,
                Scheduling = scheduling ?? IoScheduling.IoThreads,
            }),
        }, address);

    /// <summary>Starts a sockets transport (the harness of the sockets-only tests).</summary>
    public static Task<TransportHarness> StartAsync(int ioThreads = 2, IPAddress? address = null, bool trackLeaks = true, IoScheduling scheduling = IoScheduling.ThreadPool)
        => StartAsync(TransportUnderTest.Sockets, ioThreads, address, trackLeaks, scheduling);

    /// <summary>Binds <paramref name="factory"/> to loopback port 0; the harness disposes it.</summary>
    public static async Task<TransportHarness> StartAsync(ITransportFactory factory, IPAddress? address = null)
    {
        try
        {
            IConnectionListener listener = await factory.BindAsync(new IPEndPoint(address ?? IPAddress.Loopback, 0));
            return new TransportHarness(factory, listener);
        }
        catch
        {
            await ((IAsyncDisposable)factory).DisposeAsync();
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
        server.ShouldNotBeNull();
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

    /// <summary>
    /// Starts a receive on <paramref name="server"/>, sends one byte from <paramref name="client"/> once the receive is
    /// pending, and returns the thread the receive's continuation ran on.
    /// </summary>
    public static async Task<Thread> ThreadAPendingReceiveResumesOnAsync(Socket client, TransportConnection server)
    {
        ValueTask<int> pending = server.ReceiveAsync(new byte[16]);
        Task<Thread> resumedOn = ResumedThreadAsync(pending);
        await Task.Delay(20).ConfigureAwait(false);
        await SendAllAsync(client, "x"u8.ToArray()).ConfigureAwait(false);
        return await resumedOn.WaitAsync(StepTimeout).ConfigureAwait(false);

        static async Task<Thread> ResumedThreadAsync(ValueTask<int> receive)
        {
            await receive.ConfigureAwait(false);
            return Thread.CurrentThread;
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
            await ((IAsyncDisposable)Factory).DisposeAsync();
        }
    }
}

/// <summary>A delegate as a work item, for <see cref="TransportConnection.Schedule"/>.</summary>
internal sealed class DelegateWorkItem(Action action) : IThreadPoolWorkItem
{
    public void Execute() => action();
}
