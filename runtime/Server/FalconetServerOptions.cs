using System;
using System.Collections.Generic;
using System.Net;
using Falconet.Http;
using Microsoft.Extensions.Logging;

namespace Falconet.Server;

/// <summary>Settings of a <see cref="FalconetServer"/>; read once, when the server starts.</summary>
public sealed class FalconetServerOptions
{
    /// <summary>The endpoints to listen on (port 0 picks a free port; see <see cref="FalconetServer.BoundEndpoints"/>).</summary>
    public IList<IPEndPoint> Endpoints { get; } = new List<IPEndPoint>();

    /// <summary>The transport (default <see cref="TransportKind.Sockets"/>).</summary>
    public TransportKind Transport { get; set; } = TransportKind.Sockets;

    /// <summary>Request limits: line, header section, header count, body size and chunk extensions.</summary>
    public HttpLimits Limits { get; set; } = new HttpLimits();

    /// <summary>
    /// The write-behind bound per connection (default 64 KiB): writes complete at once while buffered, unsent
    /// output is below it; at or above it an asynchronous write waits for the socket.
    /// </summary>
    public long OutputBufferLimit { get; set; } = 64 * 1024;

    /// <summary>
    /// The most unread request-body bytes the server reads and discards to keep a connection open (default 64 KiB);
    /// a larger remainder closes the connection instead.
    /// </summary>
    public long MaxRequestBodyDrainSize { get; set; } = 64 * 1024;

    /// <summary>Number of I/O threads, each with its own memory pool (default: the processor count).</summary>
    public int IoThreadCount { get; set; } = Environment.ProcessorCount;

    /// <summary>How long <see cref="FalconetServer.StopAsync"/> lets in-flight requests finish before aborting them (default 10 s).</summary>
    public TimeSpan ShutdownTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>Where the server logs (default: nowhere).</summary>
    public ILoggerFactory? LoggerFactory { get; set; }

    /// <summary>Records who rented each pool block, so a leak report names it (tests; costs a stack trace per rent).</summary>
    public bool TrackPoolLeaks { get; set; }

    internal void Validate()
    {
        if (Endpoints.Count == 0)
        {
            throw new InvalidOperationException("Add at least one endpoint to FalconetServerOptions.Endpoints.");
        }

        ArgumentNullException.ThrowIfNull(Limits);
        ArgumentOutOfRangeException.ThrowIfLessThan(OutputBufferLimit, 1, nameof(OutputBufferLimit));
        ArgumentOutOfRangeException.ThrowIfNegative(MaxRequestBodyDrainSize, nameof(MaxRequestBodyDrainSize));
        ArgumentOutOfRangeException.ThrowIfLessThan(IoThreadCount, 1, nameof(IoThreadCount));
        ArgumentOutOfRangeException.ThrowIfLessThan(ShutdownTimeout, TimeSpan.Zero, nameof(ShutdownTimeout));
        if (Transport == TransportKind.Libuv)
        {
            throw new NotSupportedException("The libuv transport is not part of this build; use TransportKind.Sockets.");
        }

        if (!Enum.IsDefined(Transport))
        {
            throw new ArgumentOutOfRangeException(nameof(Transport), Transport, "Unknown transport.");
        }
    }
}
