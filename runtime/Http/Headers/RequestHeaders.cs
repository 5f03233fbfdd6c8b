namespace Falconet.Http;

// The constructors are written here, not generated: they do not vary with the schema. The generated part
// (generated/RequestHeaders.g.cs) holds the default schema's table, typed properties and matcher.
public partial class RequestHeaders
{
    /// <summary>An empty collection of the default schema's headers.</summary>
    public RequestHeaders()
        : base(Table)
    {
    }

    /// <summary>An empty collection of a header set that extends the default schema: its table lists the defaults first, at their bit indexes.</summary>
    private protected RequestHeaders(HeaderTable table)
        : base(table)
    {
    }
}
