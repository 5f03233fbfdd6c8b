namespace Falconet.Http.Http1;

/// <summary>What <see cref="Http1Parser.TryParseHeaders"/> has consumed of one header section so far, carried between calls.</summary>
public struct HeaderParseState
{
    /// <summary>Field lines handed to the handler so far.</summary>
    public int Count;

    /// <summary>Bytes of the section consumed so far, line endings included.</summary>
    public int Bytes;

    /// <summary>Starts a new header section.</summary>
    public void Reset()
    {
        Count = 0;
        Bytes = 0;
    }
}
