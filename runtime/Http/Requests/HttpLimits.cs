using System;

namespace Falconet.Http;

/// <summary>Size and count limits the HTTP/1.1 parser enforces on every request, each with the status it answers.</summary>
public sealed class HttpLimits
{
    private readonly bool _frozen;
    private int _maxRequestLineSize = 8 * 1024;
    private int _maxRequestHeadersSize = 32 * 1024;
    private int _maxRequestHeaderCount = 100;
    private long _maxRequestBodySize = 30_000_000;
    private int _maxChunkExtensionSize = 4 * 1024;

    /// <summary>Creates limits with the default values.</summary>
    public HttpLimits()
    {
    }

    private HttpLimits(bool frozen) => _frozen = frozen;

    /// <summary>The shared default limits; read-only (create a new instance to change a value).</summary>
    public static HttpLimits Default { get; } = new(frozen: true);

    /// <summary>Longest request line in bytes, CRLF included (8 KiB); longer answers 414.</summary>
    public int MaxRequestLineSize
    {
        get => _maxRequestLineSize;
        set => _maxRequestLineSize = Checked(value);
    }

    /// <summary>Largest header section in bytes, every line's CRLF and the final empty line included (32 KiB); larger answers 431.</summary>
    public int MaxRequestHeadersSize
    {
        get => _maxRequestHeadersSize;
        set => _maxRequestHeadersSize = Checked(value);
    }

    /// <summary>Most header fields in one request (100); more answers 431.</summary>
    public int MaxRequestHeaderCount
    {
        get => _maxRequestHeaderCount;
        set => _maxRequestHeaderCount = Checked(value);
    }

    /// <summary>Largest request body in bytes, declared or chunked (30 MB); larger answers 413.</summary>
    public long MaxRequestBodySize
    {
        get => _maxRequestBodySize;
        set
        {
            ThrowIfFrozen();
            ArgumentOutOfRangeException.ThrowIfNegative(value);
            _maxRequestBodySize = value;
        }
    }

    /// <summary>Longest chunk extension of one chunk, from ';' to the line's CRLF (4 KiB); longer answers 400.</summary>
    public int MaxChunkExtensionSize
    {
        get => _maxChunkExtensionSize;
        set => _maxChunkExtensionSize = Checked(value);
    }

    private int Checked(int value)
    {
        ThrowIfFrozen();
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(value);
        return value;
    }

    private void ThrowIfFrozen()
    {
        if (_frozen)
        {
            throw new InvalidOperationException("HttpLimits.Default is shared and read-only; create a new HttpLimits to change a limit.");
        }
    }
}
