"""The TT-NN report database layout that ttnn-visualizer reads, kept apart from the exporter.

Sources: ttnn's `graph_report.py` (`create_database_schema`) and `database.py` in
tenstorrent/tt-metal, and ttnn-visualizer's record of real report schemas
(`backend/ttnn_visualizer/tests/report_schemas.py`, SCHEMA_V2_1: the `.schema` of a current
report, with `source_files` and `stack_traces.source_file_id`). Visualizer releases that read
rows by position exist, so column order matters as much as the names.
"""

# ttnn.BufferType values, as stored in the report's integer buffer_type columns.
BUFFER_TYPES = {"DRAM": 0, "L1": 1, "SYSTEM_MEMORY": 2, "L1_SMALL": 3, "TRACE": 4}
# ttnn.TensorMemoryLayout values, as stored in buffers.buffer_layout.
BUFFER_LAYOUTS = {"INTERLEAVED": 0, "HEIGHT_SHARDED": 1, "WIDTH_SHARDED": 2, "BLOCK_SHARDED": 3}

# The report schema: the tables, columns and types of a TT-NN report database
# (`sqlite3 db.sqlite .schema`), reflowed.
SCHEMA = """
CREATE TABLE devices (
    device_id int, num_y_cores int, num_x_cores int, num_y_compute_cores int,
    num_x_compute_cores int, worker_l1_size int, l1_num_banks int, l1_bank_size int,
    address_at_first_l1_bank int, address_at_first_l1_cb_buffer int,
    num_banks_per_storage_core int, num_compute_cores int, num_storage_cores int,
    total_l1_memory int, total_l1_for_tensors int, total_l1_for_interleaved_buffers int,
    total_l1_for_sharded_buffers int, cb_limit int
);
CREATE TABLE operations (operation_id int UNIQUE, name text, duration float);
CREATE TABLE operation_arguments (operation_id int, name text, value text);
CREATE TABLE tensors (
    tensor_id int UNIQUE, shape text, dtype text, layout text, memory_config text,
    device_id int, address int, buffer_type int
);
CREATE TABLE device_tensors (tensor_id int, device_id int, address int);
CREATE TABLE buffers (
    operation_id int, device_id int, address int, max_size_per_bank int, buffer_type int,
    buffer_layout int
);
CREATE TABLE captured_graph (operation_id int, captured_graph text);
CREATE TABLE nodes (operation_id int, unique_id int, node_operation_id int, name text);
CREATE TABLE edges (
    operation_id int, source_unique_id int, sink_unique_id int, source_output_index int,
    sink_input_index int, key int
);
CREATE TABLE report_metadata (key text UNIQUE, value text);
CREATE TABLE errors (
    operation_id int, operation_name text, error_type text, error_message text,
    stack_trace text, timestamp text
);
CREATE TABLE source_files (id INTEGER PRIMARY KEY, path text UNIQUE NOT NULL, contents text);
CREATE TABLE stack_traces (
    operation_id int, stack_trace text, source_file_id int REFERENCES source_files(id)
);
CREATE TABLE input_tensors (operation_id int, input_index int, tensor_id int);
CREATE TABLE output_tensors (operation_id int, output_index int, tensor_id int);
CREATE TABLE local_tensor_comparison_records (
    tensor_id int, golden_tensor_id int, matches int, desired_pcc float, actual_pcc float
);
CREATE TABLE global_tensor_comparison_records (
    tensor_id int, golden_tensor_id int, matches int, desired_pcc float, actual_pcc float
);
CREATE TABLE buffer_pages (
    operation_id int, device_id int, address int, core_y int, core_x int, bank_id int,
    page_index int, page_address int, page_size int, buffer_type int
);
CREATE INDEX idx_stack_traces_source_file_id ON stack_traces (source_file_id);
"""

DEVICE_COLUMNS = (
    "device_id num_y_cores num_x_cores num_y_compute_cores num_x_compute_cores worker_l1_size"
    " l1_num_banks l1_bank_size address_at_first_l1_bank address_at_first_l1_cb_buffer"
    " num_banks_per_storage_core num_compute_cores num_storage_cores total_l1_memory"
    " total_l1_for_tensors total_l1_for_interleaved_buffers total_l1_for_sharded_buffers cb_limit"
).split()
