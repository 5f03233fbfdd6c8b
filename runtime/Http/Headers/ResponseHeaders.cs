namespace Falconet.Http;

// The constructors are written here, not generated: they do not vary with the schema. The generated part
// (generated/ResponseHeaders.g.cs) holds the default schema's table and typed properties.
public partial class ResponseHeaders
{
    /// <summary>An empty collection of the default schema's headers.</summary>
    public ResponseHeaders()
        : base(Table)
    {
    }

    /// <summary>An empty collection of a header set that extends the default schema: its table lists the defaults first, at their bit indexes.</summary>
    private protected ResponseHeaders(HeaderTable table)
        : base(table)
    {
    }
}
