using System;
using System.Buffers;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Http;

/// <summary>
/// An <see cref="IBufferWriter{T}"/> over the response body: the application writes into pool blocks directly.
/// Advance completes at once and never waits (a synchronous call cannot wait for the socket without blocking its thread);
/// <see cref="FlushAsync"/> sends, and <see cref="WaitAsync"/> applies the write-behind bound. Advancing past a
/// declared Content-Length throws before the bytes are taken.
/// </summary>
public sealed class ResponseBodyWriter : IBufferWriter<byte>
{
    private readonly HttpResponse _response;

    internal ResponseBodyWriter(HttpResponse response)
    {
        _response = response;
    }

    /// <inheritdoc/>
    public void Advance(int count) => _response.AdvanceBody(count);

    /// <inheritdoc/>
    public Memory<byte> GetMemory(int sizeHint = 0) => _response.GetBodyMemory(sizeHint);

    /// <inheritdoc/>
    public Span<byte> GetSpan(int sizeHint = 0) => _response.GetBodyMemory(sizeHint).Span;

    /// <summary>Starts the response and sends everything buffered (see <see cref="HttpResponse.FlushAsync"/>).</summary>
    public ValueTask FlushAsync(CancellationToken cancellationToken = default) => _response.FlushAsync(cancellationToken);

    /// <summary>Waits for the transport only when buffered output is at or above the write-behind bound.</summary>
    public ValueTask WaitAsync(CancellationToken cancellationToken = default) => _response.WaitForWriteBehindAsync(cancellationToken);
}
