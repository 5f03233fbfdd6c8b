using System;
using System.Numerics;

namespace Falconet.Http;

/// <summary>
/// A copy of the bytes of the last run a parse kept (a request line, a header section), to recognise the same run at the
/// start of the next request's bytes with one compare: equal bytes parse to an equal result, so the kept parse stands.
/// </summary>
/// <remarks>
/// A kept-alive client usually repeats its request lines and header lines byte for byte; one that does not (a rotating
/// cookie, a browser walking a site) would pay a copy per request for repeats that never come. So the first run offered is
/// not kept (a connection that makes one request holds no copy), and after <see cref="MaxMisses"/> runs that differed
/// from the kept one nothing is kept any more and the copy is dropped. A mutable struct: a field of its owner, never copied.
/// </remarks>
internal struct RepeatedBytes
{
    /// <summary>Received runs that differed from the kept one after which nothing is kept.</summary>
    public const int MaxMisses = 2;

    private byte[]? _bytes;
    private int _length;
    private int _misses;
    private bool _offered;
    private int _stamp;

    /// <summary>The length of the kept run, or 0 when there is none.</summary>
    public readonly int Length => _length;

    /// <summary>
    /// Changes whenever the kept run is forgotten or replaced, so that a run made of this one and others (a whole request head)
    /// can tell that its parts are still the ones it was made of.
    /// </summary>
    public readonly int Stamp => _stamp;

    /// <summary>
    /// The kept run's length when <paramref name="received"/> starts with it, otherwise 0. Bytes that differ count as a miss;
    /// fewer bytes than the run (the rest not received yet) do not.
    /// </summary>
    public int Match(ReadOnlySpan<byte> received)
    {
        int length = _length;
        if (length == 0 || received.Length < length)
        {
            return 0;
        }

        if (!received[..length].SequenceEqual(new ReadOnlySpan<byte>(_bytes, 0, length)))
        {
            _misses++;
            return 0;
        }

        return length;
    }

    /// <summary>Forgets the kept run: what it parsed to no longer holds.</summary>
    public void Forget()
    {
        _length = 0;
        _stamp++;
    }

    /// <summary>
    /// Keeps a copy of <paramref name="run"/>, just parsed, when it is at most <paramref name="maxLength"/> bytes, this is not
    /// the first run offered and the misses allow; false (and nothing kept) otherwise.
    /// </summary>
    public bool Keep(ReadOnlySpan<byte> run, int maxLength)
    {
        Forget();
        if (run.Length > maxLength || run.IsEmpty)
        {
            return false;
        }

        if (_misses >= MaxMisses)
        {
            _bytes = null;
            return false;
        }

        if (_bytes is null || _bytes.Length < run.Length)
        {
            if (!_offered)
            {
                _offered = true;
                return false;
            }

            // Grows at most a few times (64, 128, ... bytes), never per request.
            _bytes = new byte[Math.Max(64, (int)BitOperations.RoundUpToPowerOf2((uint)run.Length))];
        }

        run.CopyTo(_bytes);
        _length = run.Length;
        return true;
    }
}
